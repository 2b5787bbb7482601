package versions

import "github.com/fulfilgate/fulfilgate/internal/fulfilmenttest"

// withVerifiedPartner returns a request as the Bearer guard passes it on.
var withVerifiedPartner = fulfilmenttest.WithVerifiedPartner
