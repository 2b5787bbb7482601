package portal

import (
	"embed"
	"net/http"
	"path"
	"strings"
)

//go:embed static
var staticFS embed.FS

// staticRoutes serve the embedded stylesheet, script and icon.
func staticRoutes() []route {
	return []route{{pattern: "GET /static/{file}", public: true, handle: serveStatic}}
}

var staticTypes = map[string]string{
	".css": "text/css; charset=utf-8",
	".js":  "text/javascript; charset=utf-8",
	".svg": "image/svg+xml",
}

func serveStatic(w http.ResponseWriter, r *http.Request, _ *pageContext) error {
	name := r.PathValue("file")
	ctype, ok := staticTypes[path.Ext(name)]
	if !ok || strings.Contains(name, "/") {
		return errStatus(http.StatusNotFound, "There is no such file.")
	}
	b, err := staticFS.ReadFile("static/" + name)
	if err != nil {
		return errStatus(http.StatusNotFound, "There is no such file.")
	}
	w.Header().Set("Content-Type", ctype)
	// Assets hold no secret: a browser may keep them for a few minutes.
	w.Header().Set("Cache-Control", "private, max-age=300")
	w.Header().Del("Pragma")
	_, err = w.Write(b)
	return err
}
