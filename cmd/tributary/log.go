package main

import (
	"io"
	"log/slog"
	"os"

	"github.com/tributary-cdc/tributary/pkg/config"
)

// checkLogFlags refuses --log-level and --log-format values the
// configuration would refuse, in the same words.
func checkLogFlags(level, format string) error {
	if level != "" && !config.ValidLogLevel(level) {
		return &usageError{"--log-level: must be debug, info, warn or error"}
	}
	if format != "" && !config.ValidLogFormat(format) {
		return &usageError{"--log-format: must be text or json"}
	}
	return nil
}

// pickLogFormat is format, or when it is "", text when w is a terminal
// and JSON otherwise (ECS, files).
func pickLogFormat(w io.Writer, format string) string {
	if format != "" {
		return format
	}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			return config.LogFormatText
		}
	}
	return config.LogFormatJSON
}

// newLogger is the one logger of a command: everything, the sources
// included, logs through it. format "" means text on a terminal and JSON
// otherwise (pickLogFormat); level "" means info.
func newLogger(w io.Writer, level, format string) *slog.Logger {
	opts := &slog.HandlerOptions{Level: parseLevel(level)}
	format = pickLogFormat(w, format)
	if format == config.LogFormatText {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

func parseLevel(s string) slog.Level {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return slog.LevelInfo
	}
	return l
}
