package portal

import "net/http"

// overviewRoutes: the portal's home page.
func (h *Handler) overviewRoutes() []route {
	return []route{{pattern: "GET /{$}", handle: h.overview}}
}

type overviewData struct {
	TokenURL string
	APIBase  string
	Clients  int
}

func (h *Handler) overview(w http.ResponseWriter, r *http.Request, pc *pageContext) error {
	tokenURL := h.tokenURL(r)
	return pc.render(w, http.StatusOK, "overview", overviewData{TokenURL: tokenURL, APIBase: apiBase(tokenURL),
		Clients: len(pc.Tokens.PartnerClients(pc.Partner.ID))})
}
