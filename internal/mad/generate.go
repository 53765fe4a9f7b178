package mad

// The wire tables of this package are generated from spec/*.spec; edit
// those, then run `go generate ./...`.
//go:generate go run ./gen -spec spec -out zz_generated.go -fuzzout zz_generated_fuzz_test.go
