package caddymodule

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
//	webhooks dead   [--subscription <id>] [--partner <id>] [--limit N]
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
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return whAdminPrint(cmd, "POST", adminWebhooksBase+"test", map[string]string{"subscription": args[0]})
		},
	})
	for _, kind := range []string{"queued", "dead"} {
		c := &cobra.Command{
			Use:   kind,
			Short: "Lists " + kind + " deliveries with their attempts",
			Args:  cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				q := url.Values{}
				for _, f := range []string{"subscription", "partner"} {
					if v, _ := cmd.Flags().GetString(f); v != "" {
						q.Set(f, v)
					}
				}
				if n, _ := cmd.Flags().GetInt("limit"); n > 0 {
					q.Set("limit", strconv.Itoa(n))
				}
				path := adminWebhooksBase + kind
				if len(q) > 0 {
					path += "?" + q.Encode()
				}
				return whAdminPrint(cmd, "GET", path, nil)
			},
		}
		c.Flags().String("subscription", "", "Only deliveries of this subscription")
		c.Flags().String("partner", "", "Only deliveries of this partner")
		c.Flags().Int("limit", 0, "At most this many (default 100, at most 10000)")
		wh.AddCommand(c)
	}
	replay := &cobra.Command{
		Use:   "replay [<delivery-id> | --subscription <id> [--since <RFC 3339>]]",
		Short: "Puts dead deliveries back into the queue with fresh attempts",
		Long: `Puts one dead delivery back into the queue, or every dead delivery of a
subscription that died at or after --since (all of them without --since).
The delivery keeps its id (x-hook-id), so receivers can still dedupe.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sub, _ := cmd.Flags().GetString("subscription")
			since, _ := cmd.Flags().GetString("since")
			switch {
			case len(args) == 1 && (sub != "" || since != ""):
				return fmt.Errorf("give either a delivery id or --subscription, not both")
			case len(args) == 1:
				return whAdminPrint(cmd, "POST", adminWebhooksBase+"replay", map[string]string{"delivery": args[0]})
			case sub == "":
				return fmt.Errorf("give a delivery id or --subscription")
			}
			if since != "" {
				if _, err := time.Parse(time.RFC3339, since); err != nil {
					return fmt.Errorf("--since must be an RFC 3339 time such as 2025-01-31T08:00:00Z: %v", err)
				}
			}
			return whAdminPrint(cmd, "POST", adminWebhooksBase+"replay",
				map[string]string{"subscription": sub, "since": since})
		},
	}
	replay.Flags().String("subscription", "", "Replay the dead deliveries of this subscription")
	replay.Flags().String("since", "", "With --subscription: only deliveries that died at or after this RFC 3339 time")
	wh.AddCommand(replay)
	wh.AddCommand(&cobra.Command{
		Use:   "depth",
		Short: "Prints the number of queued and dead deliveries",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return whAdminPrint(cmd, "GET", adminWebhooksBase+"depth", nil)
		},
	})
	root.AddCommand(wh)
}

// whAdminPrint calls the admin API and pretty-prints its JSON answer.
func whAdminPrint(cmd *cobra.Command, method, path string, body any) error {
	b, err := adminCall(cmd, method, path, body)
	if err != nil {
		return err
	}
	return printJSON(b)
}
