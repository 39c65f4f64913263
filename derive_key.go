package sendloop

import (
	"crypto/hkdf"
	"crypto/sha256"
)

// DeriveKey returns 32 bytes of key material derived from the client's API key with
// HKDF-SHA256 (RFC 5869): salt and info say what the material is for, so that each use
// gets a key of its own, and the same key, salt and info always give the same bytes.
// It is for a program that seals data of the account under a key only the holder of the
// API key can make again, as listsync's state does; the API key itself is never returned,
// nor can it be computed from the result.
func (c *Client) DeriveKey(salt []byte, info string) []byte {
	k, err := hkdf.Key(sha256.New, []byte(c.key()), salt, info, 32)
	if err != nil {
		panic("sendloop: HKDF-SHA256 refused 32 bytes: " + err.Error()) // only for more than 255 blocks
	}
	return k
}
