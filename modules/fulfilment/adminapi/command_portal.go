package adminapi

import (
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"
)

func init() {
	cliCommands = append(cliCommands, addPortalCommands)
}

// portalURLEnv names the portal's address when --url is not given.
const portalURLEnv = "FULFILGATE_PORTAL_URL"

// addPortalCommands adds the partner portal's subcommands:
//
//	caddy fulfilment portal link <partner> [--ttl 15m] [--url https://gateway.example.com/portal]
//	caddy fulfilment portal sessions [--partner <id>]
//	caddy fulfilment portal revoke <session-id>
//	caddy fulfilment portal audit [--partner <id>] [--since 24h|<RFC 3339>] [--limit 100]
func addPortalCommands(root *cobra.Command) {
	p := &cobra.Command{Use: "portal", Short: "Manages the partner portal: sign-in links, sessions, the audit log"}
	link := &cobra.Command{
		Use:   "link <partner-id>",
		Short: "Creates a single-use sign-in link for a partner (printed once; give it to the partner only)",
		Args:  withUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			ttl, _ := cmd.Flags().GetDuration("ttl")
			base, _ := cmd.Flags().GetString("url")
			if base == "" {
				base = os.Getenv(portalURLEnv)
			}
			return callAndPrint(cmd, "POST", adminPortalBase+"/links", linkRequest{Partner: args[0], TTL: ttl.String(), PortalURL: base})
		},
	}
	link.Flags().Duration("ttl", 15*time.Minute, "How long the link works (1m to 24h)")
	link.Flags().String("url", "", "The portal's address, e.g. https://gateway.example.com/portal (default $"+portalURLEnv+"); without it the link is printed as a path below the portal")
	p.AddCommand(link)

	sessions := &cobra.Command{
		Use: "sessions", Short: "Lists live portal sessions (no secrets)", Args: withUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			path := adminPortalBase + "/sessions"
			if partner, _ := cmd.Flags().GetString("partner"); partner != "" {
				path += "?partner=" + url.QueryEscape(partner)
			}
			return callAndPrint(cmd, "GET", path, nil)
		},
	}
	sessions.Flags().String("partner", "", "Only this partner's sessions")
	p.AddCommand(sessions)

	p.AddCommand(&cobra.Command{
		Use: "revoke <session-id>", Short: "Ends a portal session at once", Args: withUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return callAndPrint(cmd, "DELETE", adminPortalBase+"/sessions/"+url.PathEscape(args[0]), nil)
		},
	})

	audit := &cobra.Command{
		Use: "audit", Short: "Prints the portal's audit log, newest first", Args: withUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			q := url.Values{}
			if partner, _ := cmd.Flags().GetString("partner"); partner != "" {
				q.Set("partner", partner)
			}
			if since, _ := cmd.Flags().GetString("since"); since != "" {
				q.Set("since", since)
			}
			if limit, _ := cmd.Flags().GetInt("limit"); limit > 0 {
				q.Set("limit", strconv.Itoa(limit))
			}
			path := adminPortalBase + "/audit"
			if len(q) > 0 {
				path += "?" + q.Encode()
			}
			return callAndPrint(cmd, "GET", path, nil)
		},
	}
	audit.Flags().String("partner", "", "Only this partner's records")
	audit.Flags().String("since", "", "Only records since this time (RFC 3339) or this long ago (e.g. 24h)")
	audit.Flags().Int("limit", 0, "At most this many records (default 100, at most 1000)")
	p.AddCommand(audit)
	root.AddCommand(p)
}
