package store_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/supersessiond/supersessiond/internal/store"
)

func TestOpenUnreachableNamesNoPassword(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	for _, dsn := range []string{
		"postgres://agent:Hunter2secret@" + addr + "/agent?sslmode=disable",
		"postgres://agent:Hunter#2secret@" + addr + "/agent?sslmode=disable",
		"host=127.0.0.1 port=" + strings.Split(addr, ":")[1] + " password=Hunter2secret sslmode=disable",
	} {
		_, err := store.Open(context.Background(), dsn, store.DefaultPool, 2*time.Second)
		var ue *store.UnavailableError
		if !errors.As(err, &ue) {
			t.Fatalf("%s: want *UnavailableError, got %v", dsn, err)
		}
		if strings.Contains(err.Error(), "Hunter") || strings.Contains(err.Error(), "2secret") {
			t.Fatalf("password in %q", err)
		}
	}
}

func TestWithApplicationName(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"postgres://h/db":                       "postgres://h/db?application_name=supersessiond",
		"postgres://h/db?sslmode=disable":       "postgres://h/db?sslmode=disable&application_name=supersessiond",
		"host=h dbname=db":                      "host=h dbname=db application_name=supersessiond",
		"postgres://h/db?application_name=mine": "postgres://h/db?application_name=mine",
	}
	for in, want := range cases {
		if got := store.WithApplicationName(in); got != want {
			t.Errorf("WithApplicationName(%q) = %q, want %q", in, got, want)
		}
	}
}
