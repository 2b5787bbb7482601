package adminapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// cliCommands are the subcommands of `caddy fulfilment`; each file that owns
// a part of the admin API appends its own in init. They run in another
// process than the server, so they never open the data dir: they call the
// running server's admin API, as `caddy reload` does.
var cliCommands []func(root *cobra.Command)

// adminEnv names the admin address when no flag does (the demo Caddyfile
// reads the same variable).
const adminEnv = "FULFILGATE_ADMIN"

func init() {
	caddycmd.RegisterCommand(caddycmd.Command{
		Name:  "fulfilment",
		Usage: "<command> [flags]",
		Short: "Manages partners, webhooks and feeds of a running Fulfilgate server, and its storage",
		Long: `
Manages a running Fulfilgate gateway through its admin API: partners and
their clients and keys, signing keys, webhook deliveries and change feeds.
The storage commands (migrate, export, import) open the storage themselves,
while no gateway runs on it; see their help.

Every other subcommand talks to the admin endpoint of the running server, found
as Caddy's own commands find it: the --address flag; else the admin address
of the --config file; else $FULFILGATE_ADMIN; else the admin address of the
Caddyfile in the current directory; else localhost:2019.
Secrets are printed once, when they are created or rotated.`,
		CobraFunc: func(cmd *cobra.Command) {
			cmd.PersistentFlags().String("address", "", "The address of the running server's admin API")
			cmd.PersistentFlags().StringP("config", "c", "", "Configuration file, to find the admin address (or the storage)")
			cmd.PersistentFlags().StringP("adapter", "a", "", "Name of config adapter to apply (with --config)")
			cmd.PersistentFlags().StringP("output", "o", "json", "Output format: json, or table for people")
			for _, add := range cliCommands {
				add(cmd)
			}
			groupCommand(cmd)
		},
	})
}

// groupCommand makes a command that only holds subcommands fail (exit
// status 1) with its usage on a missing or unknown subcommand, instead of
// printing its help and succeeding; it does the same for the groups below.
func groupCommand(cmd *cobra.Command) {
	for _, sub := range cmd.Commands() {
		groupCommand(sub)
	}
	if cmd.Run != nil || cmd.RunE != nil || !cmd.HasSubCommands() {
		return
	}
	cmd.Args = cobra.ArbitraryArgs
	cmd.SuggestionsMinimumDistance = 2
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return usageError(cmd, fmt.Errorf("%s needs a subcommand", cmd.CommandPath()))
		}
		msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			msg += fmt.Sprintf("; did you mean %q?", s[0])
		}
		return usageError(cmd, errors.New(msg))
	}
}

// usageError is err followed by cmd's usage (Caddy silences cobra's own).
func usageError(cmd *cobra.Command, err error) error {
	return fmt.Errorf("%w\n\n%s", err, strings.TrimRight(cmd.UsageString(), "\n"))
}

// withUsage wraps an argument check so that wrong or missing arguments print
// the command's usage.
func withUsage(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return usageError(cmd, err)
		}
		return nil
	}
}

// adminAddress finds the admin address as described in the command's help,
// and says where it came from (for error messages).
func adminAddress(cmd *cobra.Command) (addr, source string, err error) {
	addrFlag, _ := cmd.Flags().GetString("address")
	configFlag, _ := cmd.Flags().GetString("config")
	adapterFlag, _ := cmd.Flags().GetString("adapter")
	switch {
	case addrFlag != "":
		return addrFlag, "--address", nil
	case configFlag != "":
		addr, err := caddycmd.DetermineAdminAPIAddress("", nil, configFlag, adapterFlag)
		if err != nil {
			return "", "", fmt.Errorf("reading the admin address from %s: %w", configFlag, err)
		}
		return addr, "the admin address of " + configFlag, nil
	case os.Getenv(adminEnv) != "":
		return os.Getenv(adminEnv), "$" + adminEnv, nil
	}
	if _, err := os.Stat("Caddyfile"); err == nil {
		addr, err := caddycmd.DetermineAdminAPIAddress("", nil, "Caddyfile", "")
		if err != nil {
			return "", "", fmt.Errorf("reading the admin address from ./Caddyfile (use --address or --config to name another): %w", err)
		}
		return addr, "the admin address of ./Caddyfile", nil
	}
	return "localhost:2019", "the default", nil
}

// adminCall sends a request to the running server's admin API under path
// (for example "/fulfilment/partners") and returns the body of a 2xx answer.
// body, if not nil, is sent as JSON. Any other answer, or none, becomes an
// error that says what went wrong in a sentence.
func adminCall(cmd *cobra.Command, method, path string, body any) ([]byte, error) {
	addr, source, err := adminAddress(cmd)
	if err != nil {
		return nil, err
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
		return nil, adminError(err, addr, source)
	}
	defer resp.Body.Close()
	return io.ReadAll(io.LimitReader(resp.Body, 64<<20))
}

// caddyAPIError is how caddycmd.AdminAPIRequest reports an error answer.
var caddyAPIError = regexp.MustCompile(`(?s)^caddy responded with error: HTTP (\d+): (.*)$`)

// adminError turns an admin API failure into a sentence: the server's
// message for an error answer (not its JSON), a hint for no answer.
func adminError(err error, addr, source string) error {
	msg := err.Error()
	if m := caddyAPIError.FindStringSubmatch(msg); m != nil {
		var answer struct {
			Error string `json:"error"`
		}
		if json.Unmarshal([]byte(m[2]), &answer) == nil && answer.Error != "" {
			return fmt.Errorf("%s (HTTP %s from the admin API at %s)", sentence(answer.Error), m[1], addr)
		}
		return fmt.Errorf("the admin API at %s answered HTTP %s: %s", addr, m[1], strings.TrimSpace(m[2]))
	}
	if strings.Contains(msg, "connection refused") || strings.Contains(msg, "no such file or directory") {
		return fmt.Errorf("nothing answers at %s (%s): is the gateway running? use --address or --config to name its admin address",
			addr, source)
	}
	return fmt.Errorf("calling the admin API at %s (%s): %w", addr, source, err)
}

// sentence capitalises msg and ends it with a full stop.
func sentence(msg string) string {
	msg = strings.TrimSpace(msg)
	if msg == "" {
		return msg
	}
	msg = strings.ToUpper(msg[:1]) + msg[1:]
	if !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	return msg
}

// printAnswer prints a JSON answer of the admin API as --output asks:
// indented JSON, or a table for people.
func printAnswer(cmd *cobra.Command, b []byte) error {
	format, _ := cmd.Flags().GetString("output")
	switch format {
	case "table":
		return printTable(cmd.OutOrStdout(), b)
	case "json", "":
		var out bytes.Buffer
		if err := json.Indent(&out, b, "", "  "); err != nil {
			_, err = cmd.OutOrStdout().Write(b)
			return err
		}
		out.WriteByte('\n')
		_, err := out.WriteTo(cmd.OutOrStdout())
		return err
	}
	return usageError(cmd, fmt.Errorf("--output %q: use json or table", format))
}

// callAndPrint calls the admin API and prints its answer.
func callAndPrint(cmd *cobra.Command, method, path string, body any) error {
	b, err := adminCall(cmd, method, path, body)
	if err != nil {
		return err
	}
	return printAnswer(cmd, b)
}

// confirm asks the person at the terminal to confirm what (a destructive
// operation) unless --yes is given; without a terminal it refuses.
func confirm(cmd *cobra.Command, what string) error {
	if yes, _ := cmd.Flags().GetBool("yes"); yes {
		return nil
	}
	if !term.IsTerminal(int(os.Stdin.Fd())) {
		return fmt.Errorf("%s; run it again with --yes to confirm", what)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "%s. Go on? [y/N] ", what)
	line, _ := bufio.NewReader(os.Stdin).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
		return errors.New("not confirmed; nothing was changed")
	}
	return nil
}
