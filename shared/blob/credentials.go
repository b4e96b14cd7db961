package blob

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
)

// The UploadSigner's sessions (docs/decisions.md "Time and size constants").
const (
	// UploadSignerSession is the life of one assumed-role session.
	UploadSignerSession = time.Hour
	// UploadSignerRenewal is how much life a session must have left to
	// sign with: under it the session is renewed, so a 30-minute part URL
	// never outlives the credentials that signed it.
	UploadSignerRenewal = 35 * time.Minute
)

// UploadSignerCredentials returns the credentials that sign part URLs on
// AWS (Options.UploadPartCredentials): sessions of the role roleARN,
// assumed through client for UploadSignerSession and renewed once less
// than UploadSignerRenewal is left (see RenewingCredentials). The role is
// allowed only s3:PutObject on the staging bucket's incoming/* (the SAM
// template), so a leaked URL uploads a part and nothing else.
func UploadSignerCredentials(client stscreds.AssumeRoleAPIClient, roleARN string, now func() time.Time) aws.CredentialsProvider {
	provider := stscreds.NewAssumeRoleProvider(client, roleARN, func(o *stscreds.AssumeRoleOptions) {
		o.Duration = UploadSignerSession
		o.RoleSessionName = "custody-upload-signer"
	})
	return RenewingCredentials(provider, UploadSignerRenewal, now)
}

// RenewingCredentials caches the credentials of provider and retrieves new
// ones when fewer than renewal are left before they expire (by now; nil
// means time.Now). Unlike aws.CredentialsCache, whose ExpiryWindow moves
// the Expires it reports forward, it reports the credentials' true expiry,
// which bounds a presigned URL's (PresignedRequest.Expires). Safe for
// concurrent use; one retrieval at a time.
func RenewingCredentials(provider aws.CredentialsProvider, renewal time.Duration, now func() time.Time) aws.CredentialsProvider {
	if now == nil {
		now = time.Now
	}
	return &renewing{provider: provider, renewal: renewal, now: now}
}

type renewing struct {
	provider aws.CredentialsProvider
	renewal  time.Duration
	now      func() time.Time

	mu    sync.Mutex
	creds aws.Credentials
	ok    bool
}

func (r *renewing) Retrieve(ctx context.Context) (aws.Credentials, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ok && (!r.creds.CanExpire || r.creds.Expires.Sub(r.now()) >= r.renewal) {
		return r.creds, nil
	}
	c, err := r.provider.Retrieve(ctx)
	if err != nil {
		return aws.Credentials{}, fmt.Errorf("renew credentials: %w", err)
	}
	r.creds, r.ok = c, true
	return c, nil
}
