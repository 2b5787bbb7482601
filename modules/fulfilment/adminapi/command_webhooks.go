package adminapi

import (
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/spf13/cobra"
)

func init() {
	cliCommands = append(cliCommands, addWebhooksCommands)
}

// addWebhooksCommands adds `caddy fulfilment webhooks ...`:
//
//	webhooks test <subscription-id>
//	webhooks queued [--subscription <id>] [--partner <id>] [--limit N]
//	webhooks dead   [--subscription <id>] [--partner <id>] [--since <RFC 3339>] [--limit N]
//	webhooks replay <delivery-id>
//	webhooks replay --subscription <id> [--since <RFC 3339>]
//	webhooks depth
func addWebhooksCommands(root *cobra.Command) {
	wh := &cobra.Command{
		Use:   "webhooks",
		Short: "Operates webhook delivery: test events, queued and dead deliveries, replay",
	}
	wh.AddCommand(&cobra.Command{
		Use:   "test <subscription-id>",
		Short: "Queues a test event (identifier \"test\") for a subscription and prints the delivery id",
		Args:  withUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return callAndPrint(cmd, "POST", adminWebhooksBase+"test", map[string]string{"subscription": args[0]})
		},
	})
	for _, kind := range []string{"queued", "dead"} {
		c := &cobra.Command{
			Use:   kind,
			Short: "Lists " + kind + " deliveries with their attempts",
			Args:  withUsage(cobra.NoArgs),
			RunE: func(cmd *cobra.Command, _ []string) error {
				q := url.Values{}
				for _, f := range []string{"subscription", "partner", "since"} {
					if v, _ := cmd.Flags().GetString(f); v != "" {
						q.Set(f, v)
					}
				}
				if since := q.Get("since"); since != "" {
					if _, err := time.Parse(time.RFC3339, since); err != nil {
						return usageError(cmd, fmt.Errorf("--since must be an RFC 3339 time such as 2025-01-31T08:00:00Z, got %q", since))
					}
				}
				if cmd.Flags().Changed("limit") { // --limit 0 is refused by the admin API, as ?limit=0 is
					n, _ := cmd.Flags().GetInt("limit")
					q.Set("limit", strconv.Itoa(n))
				}
				path := adminWebhooksBase + kind
				if len(q) > 0 {
					path += "?" + q.Encode()
				}
				return callAndPrint(cmd, "GET", path, nil)
			},
		}
		c.Flags().String("subscription", "", "Only deliveries of this subscription")
		c.Flags().String("partner", "", "Only deliveries of this partner")
		c.Flags().Int("limit", 100, "At most this many (1 to 10000)")
		if kind == "dead" {
			c.Flags().String("since", "", "Only deliveries that died at or after this RFC 3339 time")
		}
		wh.AddCommand(c)
	}
	replay := &cobra.Command{
		Use:   "replay [<delivery-id> | --subscription <id> [--since <RFC 3339>]]",
		Short: "Puts dead deliveries back into the queue with fresh attempts",
		Long: `Puts one dead delivery back into the queue, or every dead delivery of a
subscription that died at or after --since (all of them without --since).
The delivery keeps its id (x-hook-id), so receivers can still dedupe.`,
		Args: withUsage(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			sub, _ := cmd.Flags().GetString("subscription")
			since, _ := cmd.Flags().GetString("since")
			switch {
			case len(args) == 1 && (sub != "" || since != ""):
				return usageError(cmd, fmt.Errorf("give either a delivery id or --subscription, not both"))
			case len(args) == 1:
				return callAndPrint(cmd, "POST", adminWebhooksBase+"replay", map[string]string{"delivery": args[0]})
			case sub == "":
				return usageError(cmd, fmt.Errorf("give a delivery id or --subscription"))
			}
			if since != "" {
				if _, err := time.Parse(time.RFC3339, since); err != nil {
					return usageError(cmd, fmt.Errorf("--since must be an RFC 3339 time such as 2025-01-31T08:00:00Z, got %q", since))
				}
			}
			return callAndPrint(cmd, "POST", adminWebhooksBase+"replay",
				map[string]string{"subscription": sub, "since": since})
		},
	}
	replay.Flags().String("subscription", "", "Replay the dead deliveries of this subscription")
	replay.Flags().String("since", "", "With --subscription: only deliveries that died at or after this RFC 3339 time")
	wh.AddCommand(replay)
	wh.AddCommand(&cobra.Command{
		Use:   "depth",
		Short: "Prints the number of queued and dead deliveries",
		Args:  withUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return callAndPrint(cmd, "GET", adminWebhooksBase+"depth", nil)
		},
	})
	root.AddCommand(wh)
}
