package caddymodule

import (
	"net/url"

	"github.com/spf13/cobra"
)

func init() {
	cliCommands = append(cliCommands, addFeedsCommands)
}

// addFeedsCommands adds
//
//	caddy fulfilment feeds [name]        each feed's mode, cursor, lag, last
//	                                     error, counters, rejected changes
//	caddy fulfilment feeds reset <name> [--cursor C] [--forget-seen]
func addFeedsCommands(root *cobra.Command) {
	feeds := &cobra.Command{
		Use:   "feeds [name]",
		Short: "Shows the change feeds: cursor, lag, last error, counters and rejected changes",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := adminFeedsBase
			if len(args) == 1 {
				path += "/" + url.PathEscape(args[0])
			}
			b, err := adminCall(cmd, "GET", path, nil)
			if err != nil {
				return err
			}
			return printJSON(b)
		},
	}
	reset := &cobra.Command{
		Use:   "reset <name>",
		Short: "Sets a feed's cursor (default: the beginning); --forget-seen also forgets the change ids already done",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cursor, _ := cmd.Flags().GetString("cursor")
			forget, _ := cmd.Flags().GetBool("forget-seen")
			b, err := adminCall(cmd, "POST", adminFeedsBase+"/"+url.PathEscape(args[0])+"/reset",
				map[string]any{"cursor": cursor, "forget_seen": forget})
			if err != nil {
				return err
			}
			return printJSON(b)
		},
	}
	reset.Flags().String("cursor", "", "The cursor to read after (empty: from the beginning)")
	reset.Flags().Bool("forget-seen", false, "Forget which change ids were already turned into events")
	feeds.AddCommand(reset)
	root.AddCommand(feeds)
}
