package kafka

import (
	"errors"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
)

// BrokerError is an error code a broker answered together with its own
// message. The code alone describes the class of error ("The request
// attempted to perform an operation on an invalid topic"); the message
// says what went wrong ("Topic 'a.b_c' collides with existing topic:
// a_b.c"), so both reach the user.
type BrokerError struct {
	Err     error  // the code's *kerr.Error
	Message string // the broker's message; may be empty
}

func (e *BrokerError) Error() string {
	var ke *kerr.Error
	if e.Message == "" {
		return e.Err.Error()
	}
	if errors.As(e.Err, &ke) {
		return ke.Message + ": " + e.Message
	}
	return e.Err.Error() + ": " + e.Message
}

// Unwrap keeps errors.Is(err, kerr.X) working.
func (e *BrokerError) Unwrap() error { return e.Err }

// brokerError returns nil for code 0, else the code's error with the
// broker's message when it sent one.
func brokerError(code int16, message *string) error {
	err := kerr.ErrorForCode(code)
	if err == nil {
		return nil
	}
	msg := ""
	if message != nil {
		msg = strings.TrimSpace(*message)
	}
	return withMessage(err, msg)
}

// withMessage attaches a broker message to err (a kadm result's Err and
// ErrMessage, say); err alone when there is no message.
func withMessage(err error, message string) error {
	if err == nil || message == "" {
		return err
	}
	return &BrokerError{Err: err, Message: message}
}
