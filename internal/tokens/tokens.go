// Package tokens stores bearer tokens for clients that cannot pair (another
// ACP client, a remote gateway).
package tokens

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/torii-browser/torii/internal/atomicfile"
)

// Prefix marks Torii tokens so secret scanners and people can recognise one.
const Prefix = "torii_"

// MaxLabel bounds a label's length in characters.
const MaxLabel = 64

// Token is what List shows: never the secret, never its hash.
type Token struct {
	ID        string    `json:"id"`
	Label     string    `json:"label"`
	CreatedAt time.Time `json:"createdAt"`
}

// Errors.
var (
	ErrUnknownToken = errors.New("tokens: unknown token")
	ErrBadLabel     = errors.New("tokens: label must be at most 64 printable characters")
	ErrCorruptStore = errors.New("tokens: token store is corrupt")
)

type entry struct {
	Token
	Hash string `json:"sha256"` // hex SHA-256 of the full token string
}

type fileFormat struct {
	Version int     `json:"version"`
	Tokens  []entry `json:"tokens"`
}

// Store is tokens.json (0600, atomic). It holds only SHA-256 hashes
// (SECURITY I-8). Safe for concurrent use.
type Store struct {
	path    string
	mu      sync.RWMutex
	entries []entry
	hashes  [][sha256.Size]byte // parallel to entries, decoded once
}

// Open loads path, or starts empty if it does not exist. A file open to
// group or others is refused (*atomicfile.PermError).
func Open(path string) (*Store, error) {
	s := &Store{path: path}
	// SECURITY I-9: whoever can write this file can add a token.
	data, exists, err := atomicfile.ReadPrivate(path)
	if err != nil {
		return nil, err
	}
	if !exists {
		return s, nil
	}
	var f fileFormat
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorruptStore, path, err)
	}
	seen := map[string]bool{}
	for _, e := range f.Tokens {
		h, err := hex.DecodeString(e.Hash)
		if err != nil || len(h) != sha256.Size || e.ID == "" || seen[e.ID] {
			return nil, fmt.Errorf("%w: %s: bad entry %q", ErrCorruptStore, path, e.ID)
		}
		seen[e.ID] = true
		s.entries = append(s.entries, e)
		s.hashes = append(s.hashes, [sha256.Size]byte(h))
	}
	return s, nil
}

func validLabel(l string) bool {
	if !utf8.ValidString(l) || utf8.RuneCountInString(l) > MaxLabel {
		return false
	}
	for _, r := range l {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return false
		}
	}
	return true
}

// Create makes a token, stores only its hash, and returns the token: this is
// the one time it exists outside the client that receives it.
func (s *Store) Create(label string) (id, token string, err error) {
	if !validLabel(label) {
		return "", "", fmt.Errorf("%w: %q", ErrBadLabel, label)
	}
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	token = Prefix + base64.RawURLEncoding.EncodeToString(secret)
	idb := make([]byte, 8)
	_, _ = rand.Read(idb)
	id = "tok_" + hex.EncodeToString(idb)
	h := sha256.Sum256([]byte(token))
	e := entry{
		Token: Token{ID: id, Label: label, CreatedAt: time.Now().UTC().Truncate(time.Second)},
		// SECURITY I-8: only the hash reaches the disk.
		Hash: hex.EncodeToString(h[:]),
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	next := append(slices.Clone(s.entries), e)
	if err := s.save(next); err != nil {
		return "", "", err
	}
	s.entries = next
	s.hashes = append(s.hashes, h)
	return id, token, nil
}

// List returns id, label and creation time of every token, oldest first.
func (s *Store) List() []Token {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Token, len(s.entries))
	for i, e := range s.entries {
		out[i] = e.Token
	}
	return out
}

// Revoke deletes the token; the caller closes its live connections.
func (s *Store) Revoke(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.entries, func(e entry) bool { return e.ID == id })
	if i < 0 {
		return fmt.Errorf("%w: %q", ErrUnknownToken, id)
	}
	next := slices.Delete(slices.Clone(s.entries), i, i+1)
	if err := s.save(next); err != nil {
		return err
	}
	s.entries = next
	s.hashes = slices.Delete(slices.Clone(s.hashes), i, i+1)
	return nil
}

// compareHook lets a test count comparisons; nil in production.
var compareHook func()

// Check returns the ID of the token matching token.
//
// SECURITY I-8: the candidate is hashed and compared with every stored hash
// in constant time, with no early exit, so timing reveals neither which
// token matched nor how much of one did.
func (s *Store) Check(token string) (id string, ok bool) {
	h := sha256.Sum256([]byte(token))
	s.mu.RLock()
	defer s.mu.RUnlock()
	match := -1
	for i := range s.hashes {
		if compareHook != nil {
			compareHook()
		}
		eq := subtle.ConstantTimeCompare(h[:], s.hashes[i][:])
		match = subtle.ConstantTimeSelect(eq, i, match)
	}
	if match < 0 {
		return "", false
	}
	return s.entries[match].ID, true
}

// Len is the number of stored tokens (the daemon needs one for a
// non-loopback bind, SECURITY I-1).
func (s *Store) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.entries)
}

func (s *Store) save(entries []entry) error {
	if entries == nil {
		entries = []entry{}
	}
	data, err := json.MarshalIndent(fileFormat{Version: 1, Tokens: entries}, "", "  ")
	if err != nil {
		return err
	}
	// SECURITY I-9: 0600, atomic.
	return atomicfile.Write(s.path, append(data, '\n'), 0o600)
}
