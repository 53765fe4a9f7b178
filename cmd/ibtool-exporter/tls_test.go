package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// testPKI is a throwaway CA with a server certificate for 127.0.0.1 and a
// client certificate, as PEM files in a directory.
type testPKI struct {
	dir                                          string
	ca, serverCert, serverKey, client, clientKey string
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	p := &testPKI{dir: t.TempDir()}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ibtool test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	p.ca = p.write(t, "ca.pem", "CERTIFICATE", caDER)
	issue := func(name string, serial int64, usage x509.ExtKeyUsage, ips []net.IP) (cert, key string) {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: ips,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kder, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return p.write(t, name+".pem", "CERTIFICATE", der), p.write(t, name+".key", "EC PRIVATE KEY", kder)
	}
	p.serverCert, p.serverKey = issue("server", 2, x509.ExtKeyUsageServerAuth, []net.IP{net.IPv4(127, 0, 0, 1)})
	p.client, p.clientKey = issue("prometheus", 3, x509.ExtKeyUsageClientAuth, nil)
	return p
}

func (p *testPKI) write(t *testing.T, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestScrapedByPrometheusOverTLS: the exporter serves HTTPS with client
// certificates and bcrypt basic auth from its web config file; a real
// Prometheus with the CA, its certificate and the password scrapes it,
// and is refused without the password or without the certificate.
func TestScrapedByPrometheusOverTLS(t *testing.T) {
	prom := requireBinary(t, "prometheus")
	f := simfabric.StartT(t, "tiny.net")
	pki := newTestPKI(t)
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	webConfig := filepath.Join(pki.dir, "web.yml")
	os.WriteFile(webConfig, []byte(fmt.Sprintf(`tls_server_config:
  cert_file: %s
  key_file: %s
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: %s
basic_auth_users:
  prometheus: %s
`, pki.serverCert, pki.serverKey, pki.ca, hash)), 0o600)
	d := startDaemon(t, f.Env(""), "--web.config.file", webConfig)
	checkRefusals(t, d.addr, pki)

	dir := t.TempDir()
	promAddr := freeAddr(t)
	cfg := filepath.Join(dir, "prometheus.yml")
	job := func(name, auth, cert string) string {
		return fmt.Sprintf(`  - job_name: %s
    scheme: https
    tls_config:
      ca_file: %s
%s%s    static_configs:
      - targets: [%q]
`, name, pki.ca, cert, auth, d.addr)
	}
	auth := "    basic_auth:\n      username: prometheus\n      password: s3cret\n"
	cert := fmt.Sprintf("      cert_file: %s\n      key_file: %s\n", pki.client, pki.clientKey)
	os.WriteFile(cfg, []byte("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n"+
		job("ib", auth, cert)+job("nopassword", "", cert)+job("nocert", auth, "")), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, prom, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	var promLog strings.Builder
	cmd.Stdout, cmd.Stderr = &promLog, &promLog
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); cmd.Wait() }()

	query := func(q string) []promSample {
		resp, err := http.Get("http://" + promAddr + "/api/v1/query?query=" + url.QueryEscape(q))
		if err != nil {
			return nil
		}
		defer resp.Body.Close()
		var r struct {
			Data struct{ Result []promSample }
		}
		json.NewDecoder(resp.Body).Decode(&r)
		return r.Data.Result
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		ok := len(query(fmt.Sprintf(`ib_scrape_ports{job="ib"} == %d`, tinyLinkedPorts))) == 1 &&
			len(query(`up{job=~"nopassword|nocert"} == 0`)) == 2
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Prometheus has not scraped the exporter in 60 s (up: %+v); its log:\n%s", query("up"), promLog.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if s := query(`up{job="ib"}`); len(s) != 1 || s[0].value() != "1" {
		t.Errorf("up: %+v", s)
	}
	s := query(`ib_port_link_info{node_name="Switch1",port="8"}`)
	if len(s) != 1 || s[0].Metric["remote_name"] != "sw2 desc" || s[0].Metric["remote_port"] != "4" {
		t.Errorf("link info of Switch1 port 8: %+v", s)
	}
	if s := query(`count(ib_port_receive_data_bytes_total{job="ib"})`); len(s) != 1 || s[0].value() != fmt.Sprint(tinyLinkedPorts) {
		t.Errorf("receive_data_bytes series: %+v", s)
	}
	if s := query(`count({job=~"nopassword|nocert",__name__=~"ib_.*"})`); len(s) != 0 {
		t.Errorf("the refused jobs stored samples: %+v", s)
	}
}

// checkRefusals: plain HTTP, HTTPS without the client certificate and
// HTTPS without the password or with a wrong one get nothing.
func checkRefusals(t *testing.T, addr string, pki *testPKI) {
	t.Helper()
	pool := x509.NewCertPool()
	caPEM, _ := os.ReadFile(pki.ca)
	pool.AppendCertsFromPEM(caPEM)
	clientCert, err := tls.LoadX509KeyPair(pki.client, pki.clientKey)
	if err != nil {
		t.Fatal(err)
	}
	client := func(certs ...tls.Certificate) *http.Client {
		return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: certs}}}
	}
	get := func(c *http.Client, url, user, password string) (int, error) {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if user != "" {
			req.SetBasicAuth(user, password)
		}
		resp, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	https := "https://" + addr + "/metrics"
	if code, err := get(client(clientCert), https, "prometheus", "s3cret"); err != nil || code != http.StatusOK {
		t.Errorf("with the certificate and the password: %d, %v", code, err)
	}
	for _, c := range []struct {
		name, user, password string
		cert                 bool
	}{{"no password", "", "", true}, {"a wrong password", "prometheus", "guess", true}} {
		if code, err := get(client(clientCert), https, c.user, c.password); err != nil || code != http.StatusUnauthorized {
			t.Errorf("with %s: %d, %v; want 401", c.name, code, err)
		}
	}
	if code, err := get(client(), https, "prometheus", "s3cret"); err == nil {
		t.Errorf("without a client certificate: %d; want the TLS handshake refused", code)
	}
	if code, err := get(client(clientCert), "http://"+addr+"/metrics", "prometheus", "s3cret"); err == nil && code == http.StatusOK {
		t.Errorf("plain HTTP: %d", code)
	}
}

type promSample struct {
	Metric map[string]string
	Value  []any
}

func (s promSample) value() string {
	if len(s.Value) == 2 {
		v, _ := s.Value[1].(string)
		return v
	}
	return ""
}

// freeAddr is a loopback address with a port nobody listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
