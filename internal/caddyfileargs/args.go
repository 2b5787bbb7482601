// Package caddyfileargs reads the arguments of one Caddyfile option, as
// the gateway's Caddyfile parsers (the fulfilment global option and each
// handler directive) all do: the dispenser is on the option's name, and
// every function consumes the rest of its line. An option that takes one
// value may be given once: a repeat is refused (Once), never silently
// replaced.
package caddyfileargs

import (
	"strconv"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// One returns the option's one argument.
func One(d *caddyfile.Dispenser) (string, error) {
	args := d.RemainingArgs()
	if len(args) != 1 {
		return "", d.ArgErr()
	}
	return args[0], nil
}

// Once refuses an option given again: given says whether it was set before.
func Once(d *caddyfile.Dispenser, given bool) error {
	if given {
		return d.Errf("%s given twice", d.Val())
	}
	return nil
}

// once returns the option's name and its one argument, refusing a repeat
// (given: it was set before).
func once(d *caddyfile.Dispenser, given bool) (name, v string, err error) {
	name = d.Val()
	if err := Once(d, given); err != nil {
		return name, "", err
	}
	v, err = One(d)
	return name, v, err
}

// String reads the option's one argument into *into, once; an empty value
// is refused.
func String(d *caddyfile.Dispenser, into *string) error {
	name, v, err := once(d, *into != "")
	if err != nil {
		return err
	}
	if v == "" {
		return d.Errf("%s must not be empty", name)
	}
	*into = v
	return nil
}

// Duration reads the option's one argument, a positive duration in Caddy's
// units (ms, s, m, h, d), into *into, once.
func Duration(d *caddyfile.Dispenser, into *caddy.Duration) error {
	name, v, err := once(d, *into != 0)
	if err != nil {
		return err
	}
	dur, err := caddy.ParseDuration(v)
	if err != nil {
		return d.Errf("%s: %v", name, err)
	}
	if dur <= 0 {
		return d.Errf("%s must be positive, got %s", name, v)
	}
	*into = caddy.Duration(dur)
	return nil
}

// PositiveInt reads the option's one argument, a positive integer, into
// *into, once.
func PositiveInt(d *caddyfile.Dispenser, into *int) error {
	name, v, err := once(d, *into != 0)
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return d.Errf("%s must be a positive integer (a whole positive number), got %q", name, v)
	}
	*into = n
	return nil
}

// Flag sets *into for an option without arguments, once.
func Flag(d *caddyfile.Dispenser, into *bool) error {
	if err := Once(d, *into); err != nil {
		return err
	}
	if d.NextArg() {
		return d.ArgErr()
	}
	*into = true
	return nil
}
