package registry

import (
	"maps"
	"slices"
	"sync"

	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// servers are the run's MCP servers, one per mode, made on first use
// (Run.Server), with the sessions connected to each: what reaches the
// peers outside any call.
//
// Their lock is their own, apart from the table's: a server reads what it
// lists from the table when a client asks, so making one needs nothing of
// the table; an attach tells the servers made by then that the list
// changed, and a server made after it lists the new tools anyway.
type servers struct {
	mu     sync.Mutex
	byMode map[tiers.Mode]*server.MCPServer
	made   []peerServer // in the order they were made
}

type peerServer struct {
	s        *server.MCPServer
	sessions *sessionSet
}

// get returns the server for mode, made by newServer (under the lock, so once)
// if there is none yet.
func (ss *servers) get(mode tiers.Mode, newServer func(*sessionSet) *server.MCPServer) *server.MCPServer {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if s, ok := ss.byMode[mode]; ok {
		return s
	}
	sessions := &sessionSet{m: map[string]server.ClientSession{}}
	s := newServer(sessions)
	if ss.byMode == nil {
		ss.byMode = map[tiers.Mode]*server.MCPServer{}
	}
	ss.byMode[mode] = s
	ss.made = append(ss.made, peerServer{s, sessions})
	return s
}

func (ss *servers) list() []peerServer {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return slices.Clone(ss.made)
}

// toolsChanged tells every client of every server that the tool list
// changed (an attach registered tools).
func (ss *servers) toolsChanged() {
	for _, ps := range ss.list() {
		ps.s.SendNotificationToAllClients(mcp.MethodNotificationToolsListChanged, nil)
	}
}

// Notify sends a notification to every peer of the run, outside any call
// (REG-13): the end of background work, a debugger's stop.
func (ss *servers) Notify(method string, params map[string]any) {
	for _, ps := range ss.list() {
		for _, id := range ps.sessions.ids() {
			_ = ps.s.SendNotificationToSpecificClient(id, method, params)
		}
	}
}

// Log sends a log message to every peer that asked for messages of this
// level with logging/setLevel.
func (ss *servers) Log(level mcp.LoggingLevel, logger string, data any) {
	n := mcp.NewLoggingMessageNotification(level, logger, data)
	for _, ps := range ss.list() {
		for _, id := range ps.sessions.ids() {
			_ = ps.s.SendLogMessageToSpecificClient(id, n)
		}
	}
}

// sessionSet is the sessions connected to one server, by id.
type sessionSet struct {
	mu sync.Mutex
	m  map[string]server.ClientSession
}

func (ss *sessionSet) add(s server.ClientSession) {
	ss.mu.Lock()
	ss.m[s.SessionID()] = s
	ss.mu.Unlock()
}

func (ss *sessionSet) remove(s server.ClientSession) {
	ss.mu.Lock()
	delete(ss.m, s.SessionID())
	ss.mu.Unlock()
}

func (ss *sessionSet) ids() []string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return slices.Collect(maps.Keys(ss.m))
}
