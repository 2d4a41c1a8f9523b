package tombstones_test

import (
	"testing"

	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }
