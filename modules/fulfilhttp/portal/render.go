package portal

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	"go.uber.org/zap"
)

//go:embed templates
var templateFS embed.FS

// pages holds one template set per page: the layout and the partials
// (templates/*.html) with the page's own file (templates/pages/*.html),
// which defines "title" and "content".
type pages struct {
	byName map[string]*template.Template
}

// funcs are the templates' helper functions.
var funcs = template.FuncMap{
	"time": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04 UTC")
	},
	// shortTime is for tables, whose headers say the times are UTC.
	"shortTime": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2 Jan 2006, 15:04")
	},
	"timeSec": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	},
}

func parsePages() (*pages, error) {
	base, err := template.New("layout").Funcs(funcs).ParseFS(templateFS, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("parsing the portal's layout: %w", err)
	}
	files, err := fs.Glob(templateFS, "templates/pages/*.html")
	if err != nil {
		return nil, err
	}
	p := &pages{byName: map[string]*template.Template{}}
	for _, f := range files {
		t, err := template.Must(base.Clone()).ParseFS(templateFS, f)
		if err != nil {
			return nil, fmt.Errorf("parsing the portal's page %s: %w", f, err)
		}
		p.byName[strings.TrimSuffix(path.Base(f), ".html")] = t
	}
	return p, nil
}

// view is what the layout renders: the page's own data is Data.
type view struct {
	Title   string
	Base    string
	Partner string
	Kind    string
	CSRF    string
	Nav     []navItem
	Active  string
	Notice  string
	Data    any
}

// render answers status with page name around data. The page is rendered
// into a buffer first, so a template error becomes the error page rather
// than half a page.
func (pc *pageContext) render(w http.ResponseWriter, status int, name string, data any) error {
	t, ok := pc.h.pages.byName[name]
	if !ok {
		return fmt.Errorf("no portal page %q", name)
	}
	v := view{Base: pc.Base, Data: data, Active: pc.r.URL.Path, Notice: notices[pc.r.URL.Query().Get("done")]}
	if pc.Session.ID != "" {
		v.Partner, v.CSRF, v.Nav = pc.Partner.ID, pc.Session.CSRFToken(), nav()
		v.Kind = "non-consolidation partner"
		if pc.Partner.Consolidation {
			v.Kind = "consolidation partner"
		}
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", v); err != nil {
		return fmt.Errorf("rendering the portal's page %s: %w", name, err)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, err := w.Write(buf.Bytes())
	return err
}

// notices are the messages a redirect after an action shows (?done=...):
// fixed texts, so nothing a link carries is shown.
var notices = map[string]string{
	"revoked": "The client was revoked. Its tokens no longer work.",
}

// fail answers err: a sign-in redirect, the error page with an
// *httpError's status and message, or 500 (logged, without details for
// the partner).
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, pc *pageContext, err error) {
	if errors.Is(err, errSignIn) {
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			http.Redirect(w, r, pc.Base+"/signin", http.StatusSeeOther)
			return
		}
		err = errStatus(http.StatusUnauthorized, "Your session has ended. Sign in again with a new link from your warehouse.")
	}
	var he *httpError
	if !errors.As(err, &he) {
		h.logger.Error("portal page failed", zap.String("path", r.URL.Path), zap.Error(err))
		he = &httpError{status: http.StatusInternalServerError, msg: "Something went wrong on our side. Try again; if it keeps failing, tell your warehouse."}
	}
	if h.pages == nil {
		http.Error(w, he.msg, he.status)
		return
	}
	if rerr := pc.render(w, he.status, "error", he); rerr != nil {
		h.logger.Error("rendering the portal's error page", zap.Error(rerr))
		http.Error(w, he.msg, he.status)
	}
}

// notFound is the 404 page of every path no route serves.
func (h *Handler) notFound(_ http.ResponseWriter, _ *http.Request, _ *pageContext) error {
	return errStatus(http.StatusNotFound, "There is no such page.")
}

// statusText is shown above an error page's message.
func (e *httpError) Status() string { return fmt.Sprintf("%d %s", e.status, http.StatusText(e.status)) }

// Message is the error page's message.
func (e *httpError) Message() string { return e.msg }
