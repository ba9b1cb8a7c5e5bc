package linktest

import "github.com/torii-browser/torii/internal/logwait"

// LogBuffer is a log sink a server's goroutines may write to at once,
// read by the test that checks what was logged, or waits for a line.
type LogBuffer = logwait.Buffer
