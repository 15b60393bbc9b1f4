package config

// Accepted values of log_level and log_format.
const (
	LogFormatText = "text"
	LogFormatJSON = "json"
)

// ValidLogLevel reports whether s is a log_level: debug, info, warn or error.
func ValidLogLevel(s string) bool {
	switch s {
	case "debug", "info", "warn", "error":
		return true
	}
	return false
}

// ValidLogFormat reports whether s is a log_format: text or json.
func ValidLogFormat(s string) bool { return s == LogFormatText || s == LogFormatJSON }

func (v validator) logging(c *Config) {
	if c.LogLevel != "" && !ValidLogLevel(c.LogLevel) {
		v.add("log_level", "must be debug, info, warn or error")
	}
	if c.LogFormat != "" && !ValidLogFormat(c.LogFormat) {
		v.add("log_format", "must be text or json")
	}
}
