package adminapi

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func webhooksCLI() *cobra.Command {
	root := &cobra.Command{Use: "fulfilment", SilenceUsage: true, SilenceErrors: true}
	// No server listens here: commands that pass their own checks fail
	// on the connection instead.
	root.PersistentFlags().String("address", "127.0.0.1:1", "")
	root.PersistentFlags().String("config", "", "")
	root.PersistentFlags().String("adapter", "", "")
	addWebhooksCommands(root)
	root.SetOut(io.Discard)
	root.SetErr(io.Discard)
	return root
}

func TestWebhooksCLICommands(t *testing.T) {
	wh, _, err := webhooksCLI().Find([]string{"webhooks"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range wh.Commands() {
		names = append(names, c.Name())
	}
	if got := strings.Join(names, " "); got != "dead depth queued replay test" {
		t.Fatalf("subcommands %q", got)
	}
	for _, tt := range []struct {
		args []string
		err  string
	}{
		{[]string{"webhooks", "replay"}, "give a delivery id or --subscription"},
		{[]string{"webhooks", "replay", "whd_1", "--subscription", "s"}, "not both"},
		{[]string{"webhooks", "replay", "--subscription", "s", "--since", "yesterday"}, "RFC 3339"},
		{[]string{"webhooks", "replay", "a", "b"}, "accepts at most 1 arg"},
		{[]string{"webhooks", "test"}, "accepts 1 arg"},
		{[]string{"webhooks", "depth", "x"}, "unknown command"},
		{[]string{"webhooks", "dead", "--limit", "many"}, "invalid argument"},
		// Well-formed: reaches the (absent) server.
		{[]string{"webhooks", "replay", "--subscription", "s", "--since", "2026-01-01T00:00:00Z"}, "127.0.0.1:1"},
		{[]string{"webhooks", "queued", "--partner", "acme", "--limit", "5"}, "127.0.0.1:1"},
	} {
		root := webhooksCLI()
		root.SetArgs(tt.args)
		err := root.Execute()
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%v: error %v, want %q", tt.args, err, tt.err)
		}
	}
}
