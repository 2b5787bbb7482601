package tokens

import "math"

// MinSecretBits is the least estimated entropy a client secret given in
// the configuration must carry (SecretStrength). A generated secret (32
// random bytes) estimates at over 150 bits in every encoding.
const MinSecretBits = 128

// SecretStrength estimates the entropy of a secret written by hand, in
// bits. It cannot prove a secret random; it catches the patterns people
// type. Each character is worth log2 of the alphabet the whole secret
// draws from (16 for hexadecimal digits of one case, 64 for Base64 and
// Base64url characters, 95 otherwise), except that
//
//   - a character repeating the one before it, or continuing a run of
//     consecutive characters ("abc", "321"), is worth nothing;
//   - a character ending a three-character sequence seen before in the
//     secret (a repeated part, "abcabc") is worth nothing;
//   - outside hexadecimal, a letter that is the third or later of a run of
//     letters of one case (a word) is worth 2 bits.
//
// So "DEMO-ONLY-acme-secret-0123456789abcdefghij" estimates at 116 bits,
// and the Base64url of 32 random bytes at about 220.
func SecretStrength(s string) int {
	alphabet := secretAlphabet(s)
	per := math.Log2(float64(alphabet))
	seen := map[[3]byte]bool{}
	bits := 0.0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if i >= 2 {
			tri := [3]byte{s[i-2], s[i-1], c}
			if seen[tri] {
				continue
			}
			seen[tri] = true
		}
		if i >= 1 && c == s[i-1] {
			continue
		}
		if i >= 2 {
			step := int(c) - int(s[i-1])
			if (step == 1 || step == -1) && step == int(s[i-1])-int(s[i-2]) {
				continue
			}
		}
		if alphabet != 16 && i >= 2 && sameCaseLetters(s[i-2], s[i-1], c) {
			bits += 2
			continue
		}
		bits += per
	}
	return int(bits)
}

// secretAlphabet is the size of the alphabet s draws from: 16, 64 or 95.
func secretAlphabet(s string) int {
	lowerHex, upperHex, b64 := true, true, true
	for i := 0; i < len(s); i++ {
		c := s[i]
		digit := c >= '0' && c <= '9'
		lowerHex = lowerHex && (digit || c >= 'a' && c <= 'f')
		upperHex = upperHex && (digit || c >= 'A' && c <= 'F')
		b64 = b64 && (digit || isLetter(c) || c == '+' || c == '/' || c == '=' || c == '-' || c == '_')
	}
	switch {
	case lowerHex || upperHex:
		return 16
	case b64:
		return 64
	}
	return 95
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// sameCaseLetters reports whether a, b and c are letters of one case.
func sameCaseLetters(a, b, c byte) bool {
	lower := func(x byte) bool { return x >= 'a' && x <= 'z' }
	return isLetter(a) && isLetter(b) && isLetter(c) && lower(a) == lower(b) && lower(b) == lower(c)
}
