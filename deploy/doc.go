// Package deploy holds what runs supersessiond outside this repository, and
// the tests that keep it true:
//
//   - prometheus/alerts.yml, the alerting rules, with their unit tests
//     (prometheus/alerts_test.yml, run by promtool);
//   - grafana/supersessiond.json, the dashboard;
//   - deb/, the Debian package (nfpm.yaml and its maintainer scripts), built
//     by `make deb`.
//
// The tests start a real daemon and check that every metric the dashboard and
// the alerts name is one it exports, build the package and read it back with
// dpkg-deb. There is no Go code here besides the tests.
package deploy
