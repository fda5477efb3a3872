package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
)

// LoggingLevel is a syslog severity, as MCP uses them.
type LoggingLevel string

// The logging levels, least severe first.
const (
	LevelDebug     LoggingLevel = "debug"
	LevelInfo      LoggingLevel = "info"
	LevelNotice    LoggingLevel = "notice"
	LevelWarning   LoggingLevel = "warning"
	LevelError     LoggingLevel = "error"
	LevelCritical  LoggingLevel = "critical"
	LevelAlert     LoggingLevel = "alert"
	LevelEmergency LoggingLevel = "emergency"
)

// Slog returns the slog level a logging level maps to.
func (l LoggingLevel) Slog() slog.Level {
	switch l {
	case LevelDebug:
		return slog.LevelDebug
	case LevelInfo, LevelNotice:
		return slog.LevelInfo
	case LevelWarning:
		return slog.LevelWarn
	default:
		return slog.LevelError
	}
}

// LoggingMessage is a notifications/message from the server.
type LoggingMessage struct {
	Level  LoggingLevel    `json:"level"`
	Logger string          `json:"logger,omitempty"`
	Data   json.RawMessage `json:"data"`
}

// SetLoggingLevel asks the server to send log messages of level and above:
// logging/setLevel on a legacy server; on a modern one, the level goes in
// the _meta of every later request, and only those get log messages.
func (c *Connection) SetLoggingLevel(ctx context.Context, level LoggingLevel) error {
	return c.era().setLoggingLevel(ctx, c, level)
}

// logMessage is the default for notifications/message: the connection's
// logger, at the matching level.
func (c *Connection) logMessage(m *LoggingMessage) {
	attrs := []any{"data", m.Data}
	if m.Logger != "" {
		attrs = append(attrs, "logger", m.Logger)
	}
	c.logger.Log(context.Background(), m.Level.Slog(), "mcp: server log", attrs...)
}
