package gateway

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"syscall"
)

// A provider that cannot be reached: the CLI is answered in a way it does not retry when the
// fault will not mend by itself within its retries (the provider's name does not resolve,
// nothing listens there, no route leads there, its certificate is not trusted), so its turn
// fails within seconds, naming the endpoint; any other fault (a timeout, a reset) is a 502,
// which the CLIs retry. A call whose request reached the provider's connection before it
// failed may have been billed: it is charged its reservation.

func (g *Gateway) upstreamError(w http.ResponseWriter, r *http.Request, err error) {
	c := r.Context().Value(ctxKey{}).(*call)
	if r.Context().Err() != nil { // the agent went away
		g.settle(c, metered{cut: true}, 0, "the agent hung up before the provider answered")
		return
	}
	why := "the connection to the provider failed after the request was sent"
	if errors.As(err, new(redirected)) {
		why = "the provider answered with a redirect, which is not followed"
	}
	g.settle(c, metered{cut: true}, 0, why)
	root := g.upstream[c.e.provider]
	if c.upstream != nil {
		root = c.upstream
	}
	ref := Refusal{Caller: c.caller, Provider: c.e.provider, Method: quoteShort(r.Method), Path: quoteShort(redactToken(r.RequestURI)), Status: http.StatusBadGateway}
	if why = permanent(err); why != "" {
		ref.Status = unreachableStatus[c.e.provider]
		ref.Unreachable = true
		ref.Message = "agentcanvas gateway: the " + string(c.e.provider) + " API at " + root.Redacted() + " cannot be reached: " + why + " (not retried: check the endpoint and the network)"
	} else {
		ref.Message = "agentcanvas gateway: the " + string(c.e.provider) + " API at " + root.Redacted() + " could not be reached: " + err.Error()
	}
	if key := c.caller.Keys[c.e.provider]; key != "" { // a malformed answer is quoted in err
		ref.Message = string(mask([]byte(ref.Message), []byte(key)))
	}
	g.refuse(w, ref)
}

// unreachableStatus is the answer to a call whose provider cannot be reached, by provider:
// one its CLI does not retry. Claude Code retries a 4xx several times but no 5xx that says
// x-should-retry: false; Codex and Gemini CLI retry every 5xx (30 and 10 times, minutes
// together) and no 400.
var unreachableStatus = map[Provider]int{Anthropic: http.StatusBadGateway, OpenAI: http.StatusBadRequest, Gemini: http.StatusBadRequest}

// permanent says why err will not mend by itself ("" when it may).
func permanent(err error) string {
	var dns *net.DNSError
	var cert *tls.CertificateVerificationError
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var redir redirected
	switch {
	case errors.As(err, &redir):
		return redir.Error()
	case errors.As(err, &dns) && dns.IsNotFound:
		return "the name " + dns.Name + " does not resolve"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "the connection was refused"
	case errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTUNREACH):
		return "there is no route to it"
	case errors.As(err, &cert), errors.As(err, &unknown), errors.As(err, &host):
		return "its certificate is not trusted: " + err.Error()
	}
	return ""
}
