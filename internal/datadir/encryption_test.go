package datadir

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"
)

// plaintext is a value whose bytes the encrypted data dir must not hold.
const plaintext = "webhook-key-that-must-not-be-on-disk-0123456789"

// writeAndClose opens dir with opts, stores plaintext and closes it.
func writeAndClose(t *testing.T, dir string, opts badger.Options) {
	t.Helper()
	db, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(txn *badger.Txn) error { return txn.Set([]byte("tok/pepper"), []byte(plaintext)) }); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// onDisk reports whether any file of dir holds s.
func onDisk(t *testing.T, dir, s string) bool {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(s)) {
			return true
		}
	}
	return false
}

func testKey() []byte { return bytes.Repeat([]byte{0x5a, 0xc3, 0x17, 0x8e}, 8) }

func TestEncryptedDirHoldsNoPlaintext(t *testing.T) {
	plain := filepath.Join(t.TempDir(), "plain")
	writeAndClose(t, plain, Options(plain, nil))
	if !onDisk(t, plain, plaintext) {
		t.Fatal("the unencrypted control dir does not hold the value either: the test would prove nothing")
	}
	enc := filepath.Join(t.TempDir(), "enc")
	writeAndClose(t, enc, WithEncryption(Options(enc, nil), testKey()))
	if onDisk(t, enc, plaintext) {
		t.Fatal("an encrypted data dir holds the value in plaintext")
	}
	db, err := Open(enc, WithEncryption(Options(enc, nil), testKey()))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.View(func(txn *badger.Txn) error {
		item, err := txn.Get([]byte("tok/pepper"))
		if err != nil {
			return err
		}
		return item.Value(func(v []byte) error {
			if string(v) != plaintext {
				t.Errorf("read back %q", v)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A data dir opened with the wrong key, without its key, or with a key
// while it was written unencrypted is refused with a message that says so.
func TestEncryptionKeyMismatchIsExplained(t *testing.T) {
	enc := filepath.Join(t.TempDir(), "enc")
	writeAndClose(t, enc, WithEncryption(Options(enc, nil), testKey()))
	plain := filepath.Join(t.TempDir(), "plain")
	writeAndClose(t, plain, Options(plain, nil))
	other := bytes.Repeat([]byte{1}, 32)
	for name, tc := range map[string]struct {
		dir  string
		opts badger.Options
		want string
	}{
		"wrong key":          {enc, WithEncryption(Options(enc, nil), other), "another key"},
		"no key":             {enc, Options(enc, nil), "no encryption key is configured"},
		"key on a plain dir": {plain, WithEncryption(Options(plain, nil), testKey()), "written unencrypted"},
	} {
		db, err := Open(tc.dir, tc.opts)
		if err == nil {
			db.Close()
			t.Errorf("%s: opened", name)
			continue
		}
		if !errors.Is(err, badger.ErrEncryptionKeyMismatch) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want the mismatch explained (%q)", name, err, tc.want)
		}
	}
}

func TestParseEncryptionKey(t *testing.T) {
	for in, n := range map[string]int{
		"Ire2Jld7Pg7EREXaqqLtq9N2NcQRVR8a3yj-wlRXlO0":                      32,
		"Ire2Jld7Pg7EREXaqqLtq9N2NcQRVR8a3yj+wlRXlO0=":                     32,
		"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f": 32,
		"000102030405060708090a0b0c0d0e0f":                                 16,
		"AAECAwQFBgcICQoLDA0ODxAREhMUFRYX":                                 24,
	} {
		k, err := ParseEncryptionKey(in)
		if err != nil || len(k) != n {
			t.Errorf("ParseEncryptionKey(%q) = %d bytes, %v; want %d bytes", in, len(k), err, n)
		}
	}
	for _, in := range []string{"", "short", "not base64 at all, nor hex!", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8g"} {
		if _, err := ParseEncryptionKey(in); err == nil {
			t.Errorf("ParseEncryptionKey(%q) accepted", in)
		}
	}
}

// A key that decodes to the right length but was typed, not generated (all
// zeros, a word repeated), protects nothing: it is refused, saying so.
func TestParseEncryptionKeyRefusesPatterns(t *testing.T) {
	for _, in := range []string{
		"00000000000000000000000000000000",                                 // AES-128, all zeros
		"0000000000000000000000000000000000000000000000000000000000000000", // AES-256, all zeros
		"passwordpasswordpasswordpassword",                                 // Base64 of 24 bytes
		"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",                      // Base64 of 32 zero bytes
		"abcdefabcdefabcdefabcdefabcdefab",                                 // hex, a repeated part
	} {
		_, err := ParseEncryptionKey(in)
		if err == nil || !strings.Contains(err.Error(), "random") {
			t.Errorf("ParseEncryptionKey(%q) = %v, want a refusal saying the key must be random", in, err)
		}
	}
}
