package tombstones_test

import (
	"testing"

	"github.com/supersessiond/supersessiond/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }
