package caddymodule

import (
	"net/url"

	"github.com/spf13/cobra"
)

func init() {
	cliCommands = append(cliCommands, addFeedsCommands)
}

// addFeedsCommands adds `caddy fulfilment feeds [name]`: each feed's mode,
// cursor, lag, last error, counters and rejected changes, as JSON.
func addFeedsCommands(root *cobra.Command) {
	root.AddCommand(&cobra.Command{
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
	})
}
