package tokens

import "errors"

// SetPartnerActive disables (or enables again) a partner created through
// the admin API. A disabled partner's clients get no token, and every token
// they hold is refused at once (verification checks the partner each time).
// Disabling also gives each of its clients a new version, so the tokens
// they held stay refused once the partner is enabled again. A partner from
// the configuration is changed there (ErrStatic).
func (s *Service) SetPartnerActive(id string, active bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, err := s.dynamicPartner(id)
	if err != nil {
		return err
	}
	if !active {
		// The clients first: a failure after them leaves the old tokens
		// refused, never a disabled partner whose tokens come back.
		if err := s.renewClientVersions(id); err != nil {
			return err
		}
	}
	p := *old
	p.Disabled = !active
	if err := s.store.PutPartner(PartnerRecord{ID: p.ID, Consolidation: p.Consolidation,
		WebhookKey: string(p.WebhookKey), Disabled: p.Disabled, Created: p.Created}); err != nil {
		return err
	}
	s.dynPartners[p.ID] = &p
	s.forgetIssued(p.ID)
	s.publish()
	s.log.Info("partner active changed", zapPartner(id), zapBool("active", active))
	return nil
}

// DeletePartner deletes a partner created through the admin API and its
// clients; their tokens are refused at once. A partner from the
// configuration is removed there (ErrStatic). The partner's subscriptions
// are not this package's: the caller deletes them.
func (s *Service) DeletePartner(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.dynamicPartner(id); err != nil {
		return err
	}
	var clients []string
	for cid, c := range s.dynClients {
		if c.PartnerID == id {
			clients = append(clients, cid)
		}
	}
	if err := s.store.DeletePartner(id, clients); err != nil {
		return err
	}
	s.forgetIssued(id)
	for _, cid := range clients {
		delete(s.dynClients, cid)
	}
	delete(s.dynPartners, id)
	s.publish()
	s.log.Info("partner deleted", zapPartner(id))
	return nil
}

// renewClientVersions gives each client of the partner a new version,
// which refuses every token issued to it before. Called with mu held.
func (s *Service) renewClientVersions(partnerID string) error {
	for _, old := range s.dynClients {
		if old.PartnerID != partnerID {
			continue
		}
		c := *old
		version, err := newClientVersion(s.rand)
		if err != nil {
			return err
		}
		c.version, c.legacySV = version, ""
		if err := s.updateClient(&c); err != nil && !errors.Is(err, ErrNotFound) { // gone: no token of it is valid
			return err
		}
	}
	return nil
}

// forgetIssued drops the kept tokens of a partner's clients, so none is
// handed out again. Called with mu held.
func (s *Service) forgetIssued(partnerID string) {
	for cid, c := range s.dynClients {
		if c.PartnerID == partnerID {
			s.reuse.Delete(cid)
		}
	}
}
