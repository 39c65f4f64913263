package sendloop

// The record decoders in zz_decoders_gen.go are written from the wire tags of the types
// marked //sendloop:decode; CI runs go generate and fails on a difference.
//go:generate go run ./internal/cmd/gendecode
