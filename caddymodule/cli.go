package caddymodule

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"
)

// cliCommands are the subcommands of `caddy fulfilment`; each file that owns
// a part of the admin API appends its own in init. They run in another
// process than the server, so they never open the data dir: they call the
// running server's admin API, as `caddy reload` does.
var cliCommands []func(root *cobra.Command)

func init() {
	caddycmd.RegisterCommand(caddycmd.Command{
		Name:  "fulfilment",
		Usage: "<command> [flags]",
		Short: "Manages partners, webhooks and feeds of a running Fulfilgate server",
		Long: `
Manages a running Fulfilgate gateway through its admin API: partners and
their clients and keys, signing keys, webhook deliveries and change feeds.

Every subcommand talks to the admin endpoint of the running server (the
--address flag, or the admin address of --config, or localhost:2019).
Secrets are printed once, when they are created or rotated.`,
		CobraFunc: func(cmd *cobra.Command) {
			cmd.PersistentFlags().String("address", "", "The address of the running server's admin API")
			cmd.PersistentFlags().StringP("config", "c", "", "Configuration file, to find the admin address")
			cmd.PersistentFlags().StringP("adapter", "a", "", "Name of config adapter to apply (with --config)")
			for _, add := range cliCommands {
				add(cmd)
			}
		},
	})
}

// adminCall sends a request to the running server's admin API under path
// (for example "/fulfilment/partners") and returns the body of a 2xx answer.
// body, if not nil, is sent as JSON. A non-2xx answer becomes an error
// carrying the server's message.
func adminCall(cmd *cobra.Command, method, path string, body any) ([]byte, error) {
	addrFlag, _ := cmd.Flags().GetString("address")
	configFlag, _ := cmd.Flags().GetString("config")
	adapterFlag, _ := cmd.Flags().GetString("adapter")
	addr, err := caddycmd.DetermineAdminAPIAddress(addrFlag, nil, configFlag, adapterFlag)
	if err != nil {
		return nil, fmt.Errorf("finding the admin address: %v", err)
	}
	var rd io.Reader
	hdr := http.Header{}
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
		hdr.Set("Content-Type", "application/json")
	}
	resp, err := caddycmd.AdminAPIRequest(addr, method, path, hdr, rd)
	if err != nil {
		// AdminAPIRequest already turns non-2xx answers into errors with
		// the server's message.
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(io.LimitReader(resp.Body, 64<<20))
}

// printJSON pretty-prints a JSON answer to stdout.
func printJSON(b []byte) error {
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		_, err = os.Stdout.Write(b)
		return err
	}
	out.WriteByte('\n')
	_, err := out.WriteTo(os.Stdout)
	return err
}
