// Package benchgw is what the gateway benchmarks share about the gateway
// they start: the benchmark partner's credentials, fetching a token with
// them, free loopback ports, and running a Caddy process.
package benchgw

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
)

// The benchmark partner's client credentials, for throw-away gateways
// only. The secret is random, as the gateway requires of configured
// client secrets.
const (
	Client = "bench-client"
	Secret = "bench-secret-rr9C9ucXEeNo7d98cAe8YDrhia1Ojn2J07HNRr-Mz8Y"
)

// FetchToken gets an access token with HTTP Basic client authentication,
// on a fresh connection (a readiness probe's refused request may have
// closed a pooled one).
func FetchToken(tokenURL string) (string, error) {
	req, err := http.NewRequest(http.MethodPost, tokenURL, strings.NewReader("grant_type=client_credentials"))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(Client, Secret)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var tr struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tr); err != nil || resp.StatusCode != http.StatusOK || tr.AccessToken == "" {
		return "", fmt.Errorf("token: status %d, %v", resp.StatusCode, err)
	}
	return tr.AccessToken, nil
}

// FreePorts returns n TCP ports on 127.0.0.1 that were free a moment ago.
func FreePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
