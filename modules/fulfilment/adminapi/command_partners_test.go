package adminapi

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func TestPartnerCLICommands(t *testing.T) {
	root := &cobra.Command{Use: "fulfilment"}
	addPartnerCommands(root)
	for _, path := range [][]string{
		{"partner", "create"}, {"partner", "list"}, {"partner", "show"}, {"partner", "add-client"},
		{"partner", "rotate-secret"}, {"partner", "disable-client"}, {"partner", "enable-client"},
		{"partner", "rotate-webhook-key"}, {"key", "list"}, {"key", "rotate"}, {"key", "generate"}, {"secret"},
	} {
		if c, _, err := root.Find(path); err != nil || c.Name() != path[len(path)-1] {
			t.Errorf("%v: %v", path, err)
		}
	}
	for _, args := range [][]string{{"key", "generate"}, {"key", "generate", "--alg", "HS256"}, {"secret"}} {
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetArgs(args)
		if err := root.Execute(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		s := strings.TrimSpace(out.String())
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			b, err = base64.RawURLEncoding.DecodeString(s)
		}
		if err != nil || len(b) != 32 {
			t.Fatalf("%v printed %q (%d bytes, %v)", args, s, len(b), err)
		}
	}
	root.SetArgs([]string{"key", "generate", "--alg", "none"})
	root.SetOut(&bytes.Buffer{})
	root.SetErr(&bytes.Buffer{})
	if err := root.Execute(); err == nil {
		t.Fatal("alg none accepted")
	}
}
