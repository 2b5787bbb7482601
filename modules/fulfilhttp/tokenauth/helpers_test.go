package tokenauth

import (
	"regexp"

	"github.com/fulfilgate/fulfilgate/internal/fulfilmenttest"
)

// Demo credentials and a real fulfilment app (fulfilmenttest).
const (
	tAcmeID       = fulfilmenttest.AcmeID
	tAcmeSecret   = fulfilmenttest.AcmeSecret
	tGlobexID     = fulfilmenttest.GlobexID
	tGlobexSecret = fulfilmenttest.GlobexSecret
)

var (
	testTokensConfig = fulfilmenttest.TokensConfig
	startTokensApp   = fulfilmenttest.StartTokensApp
	testSigner       = fulfilmenttest.Signer
	signTestToken    = fulfilmenttest.SignToken
)

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
