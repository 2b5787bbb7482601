package pgtest

// Options are a cluster's settings for Start.
type Options struct {
	// Durable turns fsync and full-page writes on (the tests' clusters run
	// without them): every commit is on disk when it returns, as on a
	// production server. For benchmarks.
	Durable bool
}

// Start starts a cluster outside a test (a benchmark program): in a new
// temporary directory, as the postgres user when run as root, listening
// on a unix socket in that directory only. The caller stops it with Stop.
func Start(o Options) (*Cluster, error) {
	bins, err := findBinaries()
	if err != nil {
		return nil, err
	}
	return startCluster(bins, o.Durable)
}
