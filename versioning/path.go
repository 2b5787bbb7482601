package versioning

// Path safety. Every request path is checked in its escaped form (what
// net/url's URL.EscapedPath returns) before any of it is mapped, so that no
// spelling of a path can make the upstream see a path outside the version's
// prefix, however the upstream decodes or normalises it.
//
// A path is accepted only if:
//   - it starts with "/" and every byte is an RFC 3986 pchar byte, "/" or
//     part of a "%XX" escape with two hex digits (no raw space, backslash,
//     control or non-ASCII bytes: URL.EscapedPath never yields them);
//   - no escape decodes to "/" (%2F), "\" (%5C), "%" (%25, double encoding),
//     a control character (%00-%1F, %7F);
//   - no segment is empty ("//"), except one trailing slash at the very end;
//   - no segment's name, i.e. the part before its first ";" (decoded), is
//     empty, "." or "..": this rejects "..", "%2e%2e", ".%2E", and the
//     path-parameter forms "..;x" and ";x" that Java servlet containers
//     treat as dot or empty segments.
//
// The mapped path is additionally required to decode to valid UTF-8 (see
// Table.Map), which rejects overlong encodings such as "%c0%ae".

// checkPath reports why escaped is not an acceptable request path, or "" if
// it is. It does not allocate.
func checkPath(escaped string) string {
	why, _ := scanPath(escaped)
	return why
}

// scanPath is checkPath, and when escaped is accepted, the bits of
// pathByteClass its bytes hold together: notKeptByURL among them means
// net/url's path encoding would escape one of them.
func scanPath(escaped string) (why string, class byte) {
	if len(escaped) == 0 || escaped[0] != '/' {
		return "the path must start with /", 0
	}
	if len(escaped) == 1 {
		return "", 0 // the root
	}
	return scanSegments(escaped[1:], true)
}

// checkSegments checks a "/"-separated run of segments (without the leading
// slash). trailingSlash allows a final empty segment.
func checkSegments(s string, trailingSlash bool) string {
	why, _ := scanSegments(s, trailingSlash)
	return why
}

// scanSegments is checkSegments, and the bits of pathByteClass the bytes
// of s hold together (all of them when s is accepted).
//
// A segment of plain bytes only (no notPlain bit: no escape, no ';') is
// safe unless it is "." or ".."; only the others take checkSegment's
// byte-by-byte decoding, so the common path costs a table look-up per byte.
func scanSegments(s string, trailingSlash bool) (string, byte) {
	var all byte // the bits of all bytes
	for start := 0; ; {
		var seg byte // the bits of the segment's bytes
		i := start
		for ; i < len(s) && s[i] != '/'; i++ {
			seg |= pathByteClass[s[i]]
		}
		all |= seg
		last := i == len(s)
		if why := checkSegmentAt(s[start:i], seg&notPlain, last, last && trailingSlash && start > 0); why != "" {
			return why, 0
		}
		if last {
			return "", all
		}
		start = i + 1
	}
}

// checkSegmentAt checks the segment seg of checkSegments; odd is not 0 if
// it holds a byte that is not plain, last is whether it ends the path, and
// emptyOK whether it may then be empty (one trailing slash).
func checkSegmentAt(seg string, odd byte, last, emptyOK bool) string {
	switch {
	case seg == "":
		if last && emptyOK {
			return ""
		}
		return "the path has an empty segment"
	case odd != 0:
		return checkSegment(seg)
	case seg == "." || seg == "..":
		return "the path has a dot segment"
	}
	return ""
}

// The bits of pathByteClass.
const (
	// notPlain: a segment may not hold the byte raw without the decoding
	// check: all but the path bytes (isPathByte), and ';', which starts the
	// segment's parameters.
	notPlain byte = 1 << iota
	// notKeptByURL: net/url's path encoding (URL.EscapedPath of a URL
	// without RawPath) escapes the byte; it keeps the RFC 3986 unreserved
	// bytes, "/" and "$&+,:;=@".
	notKeptByURL
)

// pathByteClass holds the bits above for every byte.
var pathByteClass = func() (t [256]byte) {
	for c := range 256 {
		if !isPathByte(byte(c)) || c == ';' {
			t[c] |= notPlain
		}
		if !keptByURL(byte(c)) {
			t[c] |= notKeptByURL
		}
	}
	return t
}()

// keptByURL reports whether net/url's path encoding leaves c as it is.
func keptByURL(c byte) bool {
	if isAlnum(c) {
		return true
	}
	switch c {
	case '-', '_', '.', '~', '/', '$', '&', '+', ',', ':', ';', '=', '@':
		return true
	}
	return false
}

// checkSegment checks one non-empty segment.
func checkSegment(seg string) string {
	nameLen := 0   // decoded length of the name part (before ';')
	nameDots := 0  // how many of those are '.'
	inName := true // still before the first ';'
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		if c == '%' {
			if i+2 >= len(seg) || !isHex(seg[i+1]) || !isHex(seg[i+2]) {
				return "the path has a malformed percent-escape"
			}
			c = unhex(seg[i+1])<<4 | unhex(seg[i+2])
			i += 2
			switch {
			case c == '/':
				return "the path has an encoded slash"
			case c == '\\':
				return "the path has an encoded backslash"
			case c == '%':
				return "the path has a double-encoded percent-escape"
			case c < 0x20 || c == 0x7f:
				return "the path has an encoded control character"
			}
		} else if !isPathByte(c) {
			return "the path has a character that is not allowed"
		}
		if !inName {
			continue
		}
		if c == ';' {
			inName = false
			continue
		}
		nameLen++
		if c == '.' {
			nameDots++
		}
	}
	if nameLen == 0 {
		return "the path has an empty segment"
	}
	if nameDots == nameLen && nameLen <= 2 {
		return "the path has a dot segment"
	}
	return ""
}

// isPathByte reports whether c may appear unescaped in a path segment:
// RFC 3986 unreserved, sub-delims, ':' and '@'.
func isPathByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '-', '.', '_', '~', '!', '$', '&', '\'', '(', ')', '*', '+', ',', ';', '=', ':', '@':
		return true
	}
	return false
}

// isName reports whether s is a plain name: a letter or digit, then letters,
// digits, '-' or '_'. Version and resource names must be plain names, so
// that e.g. "_debug" or "%70roducts" never select a resource.
func isName(s string) bool {
	if s == "" || !isAlnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}
