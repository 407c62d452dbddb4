package mcp

import (
	"context"
	"encoding/json"
	"sync"

	"winx/jsonrpc"
)

// SubscriptionFilter is what a subscriptions/listen stream asks to hear.
type SubscriptionFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
}

// maxResourceSubscriptions bounds one stream's URI list.
const maxResourceSubscriptions = 1024

// change is one event fanned out to listeners.
type change struct {
	method string // notifications/tools/list_changed, ...
	uri    string // for notifications/resources/updated
}

func (f *SubscriptionFilter) wants(c change) bool {
	switch c.method {
	case "notifications/tools/list_changed":
		return f.ToolsListChanged
	case "notifications/prompts/list_changed":
		return f.PromptsListChanged
	case "notifications/resources/list_changed":
		return f.ResourcesListChanged
	case "notifications/resources/updated":
		for _, u := range f.ResourceSubscriptions {
			if u == c.uri {
				return true
			}
		}
	}
	return false
}

// subscriptionHub fans changes out to open listen streams and the GET
// streams of legacy connections.
type subscriptionHub struct {
	mu        sync.Mutex // guards listeners and next
	listeners map[int]func(change)
	next      int
}

func newSubscriptionHub() *subscriptionHub {
	return &subscriptionHub{listeners: make(map[int]func(change))}
}

func (h *subscriptionHub) add(fn func(change)) (remove func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	id := h.next
	h.next++
	h.listeners[id] = fn
	return func() {
		h.mu.Lock()
		delete(h.listeners, id)
		h.mu.Unlock()
	}
}

func (h *subscriptionHub) publish(c change) {
	h.mu.Lock()
	fns := make([]func(change), 0, len(h.listeners))
	for _, fn := range h.listeners {
		fns = append(fns, fn)
	}
	h.mu.Unlock()
	for _, fn := range fns {
		fn(c)
	}
}

// NotifyToolsChanged tells listeners that tools/list would answer differently.
func (s *Server) NotifyToolsChanged() {
	s.subs.publish(change{method: "notifications/tools/list_changed"})
}

// NotifyPromptsChanged tells listeners that prompts/list changed.
func (s *Server) NotifyPromptsChanged() {
	s.subs.publish(change{method: "notifications/prompts/list_changed"})
}

// NotifyResourceUpdated tells subscribers of uri that it changed.
func (s *Server) NotifyResourceUpdated(uri string) {
	s.subs.publish(change{method: "notifications/resources/updated", uri: uri})
}

type listenParams struct {
	Notifications SubscriptionFilter `json:"notifications"`
}

// notificationMeta tags a stream's notifications with its subscription id.
type notificationMeta struct {
	SubscriptionID jsonrpc.ID `json:"io.modelcontextprotocol/subscriptionId"`
}

type listenNotification struct {
	Meta notificationMeta `json:"_meta"`
	URI  string           `json:"uri,omitempty"`
	// Notifications is set on the acknowledgement only.
	Notifications *SubscriptionFilter `json:"notifications,omitempty"`
}

// listen serves subscriptions/listen: it acknowledges with the honoured
// filter, then forwards matching changes until ctx ends. It returns
// ErrNoResponse when the client went away (nothing left to answer).
func (s *Server) listen(ctx context.Context, ex *exchange, params json.RawMessage) (json.RawMessage, error) {
	var p listenParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if len(p.Notifications.ResourceSubscriptions) > maxResourceSubscriptions {
		return nil, invalidParams("at most %d resource subscriptions per stream", maxResourceSubscriptions)
	}
	// Only what this server can ever emit is honoured; the ack says so.
	honoured := SubscriptionFilter{
		ToolsListChanged:     p.Notifications.ToolsListChanged && s.registry.hasTools(),
		PromptsListChanged:   p.Notifications.PromptsListChanged && s.registry.hasPrompts(),
		ResourcesListChanged: p.Notifications.ResourcesListChanged && s.registry.hasResources(),
	}
	if s.registry.hasResources() {
		honoured.ResourceSubscriptions = p.Notifications.ResourceSubscriptions
	}
	meta := notificationMeta{SubscriptionID: ex.id}
	events := make(chan change, 64)
	remove := s.subs.add(func(c change) {
		if honoured.wants(c) {
			select {
			case events <- c:
			default: // a stalled stream loses changes rather than stalling the server
			}
		}
	})
	defer remove()
	if err := ex.out.notify("notifications/subscriptions/acknowledged",
		&listenNotification{Meta: meta, Notifications: &honoured}); err != nil {
		return nil, jsonrpc.ErrNoResponse
	}
	for {
		select {
		case c := <-events:
			if err := ex.out.notify(c.method, &listenNotification{Meta: meta, URI: c.uri}); err != nil {
				return nil, jsonrpc.ErrNoResponse
			}
		case <-ctx.Done():
			return nil, jsonrpc.ErrNoResponse
		}
	}
}
