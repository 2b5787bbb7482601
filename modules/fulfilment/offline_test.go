package fulfilment

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"
)

// The storage commands find the storage a configuration names: its
// data_dir (placeholders replaced), its backend, its encryption key.
func TestConfiguredStorageReadsTheConfigurationsStorage(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	t.Setenv("FULFILGATE_TEST_KEY", "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=")
	cfg := fmt.Sprintf(`{"apps":{"fulfilment":{"data_dir":%q,"encryption_key":"{env.FULFILGATE_TEST_KEY}","storage":{"backend":"badger"}}}}`, dir)
	o, err := ConfiguredStorage([]byte(cfg), zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if o.Name() != "badger" || o.DataDir() != dir {
		t.Fatalf("storage %s in %s, want badger in %s", o.Name(), o.DataDir(), dir)
	}
	if _, err := o.Open(true); err == nil || !strings.Contains(err.Error(), "no data directory") {
		t.Fatalf("opening a data dir that does not exist for an export: %v, want it refused", err)
	}
	st, err := o.Open(false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Tokens().Partners(); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	// The data dir was created encrypted: without the key it does not open.
	plain, err := BadgerDataDir(dir, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.Open(true); err == nil || !strings.Contains(err.Error(), "encrypted") {
		t.Fatalf("the data dir opened without the configuration's key: %v; want the key applied when it was created", err)
	}
}

func TestConfiguredStorageWithoutTheAppIsTheDefaultDataDir(t *testing.T) {
	o, err := ConfiguredStorage([]byte(`{"apps":{}}`), zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if o.Name() != "badger" || o.DataDir() != defaultDataDir() {
		t.Fatalf("storage %s in %s, want badger in the default %s", o.Name(), o.DataDir(), defaultDataDir())
	}
}

func TestConfiguredStorageRefusesAnUnsetKeyPlaceholder(t *testing.T) {
	os.Unsetenv("FULFILGATE_TEST_UNSET_KEY")
	cfg := fmt.Sprintf(`{"apps":{"fulfilment":{"data_dir":%q,"encryption_key":"{env.FULFILGATE_TEST_UNSET_KEY}"}}}`, t.TempDir())
	if _, err := ConfiguredStorage([]byte(cfg), zap.NewNop()); err == nil || !strings.Contains(err.Error(), "encryption_key is empty") {
		t.Fatalf("a key placeholder that resolves to nothing: %v, want it refused (an export would read, an import write, unencrypted)", err)
	}
}
