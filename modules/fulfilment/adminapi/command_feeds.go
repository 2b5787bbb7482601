package adminapi

import (
	"fmt"
	"net/url"

	"github.com/spf13/cobra"
)

func init() {
	cliCommands = append(cliCommands, addFeedsCommands)
}

// addFeedsCommands adds
//
//	caddy fulfilment feeds [name]        each feed's mode, cursor, lag, last
//	                                     error, counters, rejected changes and
//	                                     (shared database) the instance reading it
//	caddy fulfilment feeds reset <name> [--cursor C] [--forget-seen] [--yes]
func addFeedsCommands(root *cobra.Command) {
	feeds := &cobra.Command{
		Use:   "feeds [name]",
		Short: "Shows the change feeds: cursor, lag, last error, counters and rejected changes",
		Args:  withUsage(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := adminFeedsBase
			if len(args) == 1 {
				path += "/" + url.PathEscape(args[0])
			}
			return callAndPrint(cmd, "GET", path, nil)
		},
	}
	reset := &cobra.Command{
		Use:   "reset <name> [--cursor C] [--forget-seen] [--yes]",
		Short: "Sets a feed's cursor (default: the beginning); --forget-seen also forgets the change ids already done",
		Long: `Sets a feed's cursor: the reader goes on after it (an empty cursor, the
default, reads the feed from its beginning). A cursor ahead of the reader
skips the changes in between; one behind it reads them again, and changes
already done are skipped by id. With --forget-seen the ids of the changes
done are forgotten too, so changes read again produce their events again:
each reaches the receivers with the x-hook-id it had the first time, so a
receiver that de-duplicates on x-hook-id processes it once.

It asks for confirmation, or takes --yes.`,
		Args: withUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			cursor, _ := cmd.Flags().GetString("cursor")
			forget, _ := cmd.Flags().GetBool("forget-seen")
			what := fmt.Sprintf("This sets the cursor of feed %s to %q", args[0], cursor)
			if forget {
				what += " and forgets the changes it has done, so they are sent to the partners again"
			}
			if err := confirm(cmd, what); err != nil {
				return err
			}
			return callAndPrint(cmd, "POST", adminFeedsBase+"/"+url.PathEscape(args[0])+"/reset",
				map[string]any{"cursor": cursor, "forget_seen": forget})
		},
	}
	reset.Flags().String("cursor", "", "The cursor to read after (empty: from the beginning)")
	reset.Flags().Bool("forget-seen", false, "Forget which change ids were already turned into events")
	reset.Flags().BoolP("yes", "y", false, "Do not ask for confirmation")
	feeds.AddCommand(reset)
	root.AddCommand(feeds)
}
