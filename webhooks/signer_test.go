package webhooks

import "testing"

// The expected values were computed once, independently, with Python:
//
//	python3 -c 'import hmac,hashlib,base64; key=b"whsec-test-key-0123456789abcdef0123456789";
//	  body=b"{\"type\":\"shipment.shipped\",\"resource\":\"shipment\",\"identifier\":\"SHP-1\"}";
//	  print(base64.b64encode(hmac.new(key,body,hashlib.sha256).digest()).decode());
//	  print("v1,"+base64.b64encode(hmac.new(key,b"whd_abc.1700000000."+body,hashlib.sha256).digest()).decode())'
const (
	vectorKey      = "whsec-test-key-0123456789abcdef0123456789"
	vectorBody     = `{"type":"shipment.shipped","resource":"shipment","identifier":"SHP-1"}`
	vectorSig      = "MyMcn7SRDnX7LfYMu+P48zqH7SLKh6st76wdIkfy86Q="
	vectorStdSig   = "v1,8WnKlmZMVTh2FwztTviLUpO+OCv79aW98wLFBuackek="
	vectorStdID    = "whd_abc"
	vectorStdStamp = 1700000000
)

func TestSignVector(t *testing.T) {
	body := Event{Name: EventShipmentShipped, Identifier: "SHP-1"}.Payload().Body()
	if string(body) != vectorBody {
		t.Fatalf("body %s, want %s", body, vectorBody)
	}
	if got := Sign([]byte(vectorKey), body); got != vectorSig {
		t.Fatalf("Sign = %s, want %s", got, vectorSig)
	}
	if !Verify([]byte(vectorKey), body, vectorSig) {
		t.Fatal("Verify rejects the vector")
	}
	if Verify([]byte(vectorKey+"x"), body, vectorSig) || Verify([]byte(vectorKey), body, "not base64!") ||
		Verify([]byte(vectorKey), append(body, ' '), vectorSig) {
		t.Fatal("Verify accepts a wrong key, signature or body")
	}
	if got := StandardSignature([]byte(vectorKey), vectorStdID, vectorStdStamp, body); got != vectorStdSig {
		t.Fatalf("StandardSignature = %s, want %s", got, vectorStdSig)
	}
}
