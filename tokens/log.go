package tokens

import (
	"time"

	"go.uber.org/zap"
)

// Log fields; secrets and tokens are never logged.
func zapPartner(id string) zap.Field        { return zap.String("partner_id", id) }
func zapClient(id string) zap.Field         { return zap.String("client_id", id) }
func zapBool(name string, v bool) zap.Field { return zap.Bool(name, v) }

func zapDuration(name string, d time.Duration) zap.Field { return zap.Duration(name, d) }
