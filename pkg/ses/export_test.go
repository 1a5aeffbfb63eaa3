package ses

import "github.com/interrupthost/interrupthost/pkg/outbound"

// Message is the MIME message Send would hand SES, for the tests that need no SES.
func (s Mailer) Message(m outbound.Mail) ([]byte, error) { return s.message(m) }
