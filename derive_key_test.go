package sendloop_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
)

// oneBlockHKDF is HKDF-SHA256 of one block as listsync's state derived its keys before
// the client did (0.4.0): DeriveKey must give the same bytes, or 0.4.0 states stop opening.
func oneBlockHKDF(secret, salt []byte, info string) []byte {
	ext := hmac.New(sha256.New, salt)
	ext.Write(secret)
	exp := hmac.New(sha256.New, ext.Sum(nil))
	exp.Write([]byte(info))
	exp.Write([]byte{1})
	return exp.Sum(nil)
}

func TestDeriveKey(t *testing.T) {
	t.Parallel()
	const key = "test-api-key-0123456789"
	c, err := sendloop.NewClient("  " + key + "\n") // trimmed, as every request sends it
	require.NoError(t, err)
	other, err := sendloop.NewClient(key + "x")
	require.NoError(t, err)
	salt := []byte("sendloop sync state")
	for _, tc := range []struct {
		name string
		salt []byte
		info string
	}{
		{name: "a state's key ID", salt: salt, info: "key id"},
		{name: "a state's file key", salt: bytes.Repeat([]byte{7}, 32), info: "sendloop sync state: file key"},
		{name: "no salt", info: "x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := c.DeriveKey(tc.salt, tc.info)
			require.Len(t, got, 32)
			assert.Equal(t, oneBlockHKDF([]byte(key), tc.salt, tc.info), got, "the derivation of 0.4.0")
			assert.Equal(t, got, c.DeriveKey(tc.salt, tc.info), "the same inputs, the same key")
			assert.NotEqual(t, got, c.DeriveKey(tc.salt, tc.info+"."), "another info")
			assert.NotEqual(t, got, c.DeriveKey(append([]byte("x"), tc.salt...), tc.info), "another salt")
			assert.NotEqual(t, got, other.DeriveKey(tc.salt, tc.info), "another API key")
			assert.NotContains(t, string(got), key)
		})
	}
	assert.NotContains(t, fmt.Sprintf("%+v %#v", c, c), key, "the client never shows its key")
}
