package adminapi

import (
	"crypto/rand"
	"fmt"
	"net/url"

	"github.com/spf13/cobra"

	"github.com/fulfilgate/fulfilgate/tokens"
)

func init() {
	cliCommands = append(cliCommands, addPartnerCommands)
}

// addPartnerCommands adds the partner and key subcommands:
//
//	caddy fulfilment partner create <id> [--consolidation]
//	caddy fulfilment partner list
//	caddy fulfilment partner show <id>
//	caddy fulfilment partner add-client <id>
//	caddy fulfilment partner rotate-secret <id> <client>
//	caddy fulfilment partner disable-client <id> <client>
//	caddy fulfilment partner enable-client <id> <client>
//	caddy fulfilment partner rotate-webhook-key <id>
//	caddy fulfilment partner disable|enable <id>
//	caddy fulfilment partner delete <id> [--yes]
//	caddy fulfilment key list
//	caddy fulfilment key rotate
//	caddy fulfilment key generate [--alg EdDSA|HS256]   (local; prints a key for signing_key)
//	caddy fulfilment secret                             (local; prints a random secret)
func addPartnerCommands(root *cobra.Command) {
	p := &cobra.Command{Use: "partner", Short: "Manages partners and their clients (secrets are printed once)"}
	call := func(method, path string, body any) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, _ []string) error {
			return callAndPrint(cmd, method, path, body)
		}
	}
	create := &cobra.Command{
		Use: "create <partner-id>", Short: "Creates a partner with one client; prints its client id, secret and webhook key once",
		Args: withUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			cons, _ := cmd.Flags().GetBool("consolidation")
			return call("POST", adminPartnersBase, createPartnerRequest{ID: args[0], Consolidation: cons})(cmd, args)
		},
	}
	create.Flags().Bool("consolidation", false, "The partner is a consolidation partner")
	p.AddCommand(create)
	p.AddCommand(&cobra.Command{Use: "list", Short: "Lists partners and clients (no secrets)", Args: withUsage(cobra.NoArgs),
		RunE: call("GET", adminPartnersBase, nil)})
	p.AddCommand(&cobra.Command{Use: "show <partner-id>", Short: "Shows one partner (no secrets)", Args: withUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return call("GET", adminPartnersBase+"/"+url.PathEscape(args[0]), nil)(cmd, args)
		}})
	p.AddCommand(&cobra.Command{Use: "add-client <partner-id>", Short: "Adds a client (also to a partner of the Caddyfile; at most the portal's max_clients); prints its id and secret once", Args: withUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return call("POST", adminPartnersBase+"/"+url.PathEscape(args[0])+"/clients", nil)(cmd, args)
		}})
	for _, op := range []struct{ use, action, short string }{
		{"rotate-secret", "rotate", "Gives a client a new secret (printed once); its tokens stop working at once"},
		{"disable-client", "disable", "Disables a client; its tokens stop working at once"},
		{"enable-client", "enable", "Enables a disabled client again"},
	} {
		p.AddCommand(&cobra.Command{Use: op.use + " <partner-id> <client-id>", Short: op.short, Args: withUsage(cobra.ExactArgs(2)),
			RunE: func(cmd *cobra.Command, args []string) error {
				return call("POST", adminPartnersBase+"/"+url.PathEscape(args[0])+"/clients/"+url.PathEscape(args[1])+"/"+op.action, nil)(cmd, args)
			}})
	}
	for _, op := range []struct{ use, action, short string }{
		{"disable", "disable", "Disables a partner: its clients get no token and their tokens are refused at once; its subscriptions stay"},
		{"enable", "enable", "Enables a disabled partner again"},
	} {
		p.AddCommand(&cobra.Command{Use: op.use + " <partner-id>", Short: op.short, Args: withUsage(cobra.ExactArgs(1)),
			RunE: func(cmd *cobra.Command, args []string) error {
				return call("POST", adminPartnersBase+"/"+url.PathEscape(args[0])+"/"+op.action, nil)(cmd, args)
			}})
	}
	del := &cobra.Command{Use: "delete <partner-id> [--yes]",
		Short: "Deletes a partner, its clients (their tokens are refused at once) and its subscriptions (queued deliveries are dropped)",
		Args:  withUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := confirm(cmd, fmt.Sprintf("This deletes partner %s, its clients and its subscriptions", args[0])); err != nil {
				return err
			}
			return call("DELETE", adminPartnersBase+"/"+url.PathEscape(args[0]), nil)(cmd, args)
		}}
	del.Flags().BoolP("yes", "y", false, "Do not ask for confirmation")
	p.AddCommand(del)
	p.AddCommand(&cobra.Command{Use: "rotate-webhook-key <partner-id>", Short: "Gives a partner (also a static one without webhook_key in the Caddyfile) a new webhook key (printed once)", Args: withUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return call("POST", adminPartnersBase+"/"+url.PathEscape(args[0])+"/webhook-key/rotate", nil)(cmd, args)
		}})
	root.AddCommand(p)

	k := &cobra.Command{Use: "key", Short: "Manages token signing keys"}
	k.AddCommand(&cobra.Command{Use: "list", Short: "Lists signing keys (no key material)", Args: withUsage(cobra.NoArgs), RunE: call("GET", adminKeysBase, nil)})
	k.AddCommand(&cobra.Command{Use: "rotate", Short: "Makes a new generated signing key current; tokens of the previous key stay valid until they expire",
		Args: withUsage(cobra.NoArgs), RunE: call("POST", adminKeysBase+"/rotate", nil)})
	gen := &cobra.Command{Use: "generate", Short: "Prints a new random key for the signing_key option (runs locally)", Args: withUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			alg, _ := cmd.Flags().GetString("alg")
			key, err := tokens.GenerateKey(rand.Reader, alg)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), key)
			return err
		}}
	gen.Flags().String("alg", tokens.AlgEdDSA, "EdDSA or HS256")
	k.AddCommand(gen)
	root.AddCommand(k)

	root.AddCommand(&cobra.Command{Use: "secret", Short: "Prints a random secret of 32 bytes for a static client or webhook key (runs locally)",
		Args: withUsage(cobra.NoArgs), RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := tokens.NewSecret(rand.Reader)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), s)
			return err
		}})
}
