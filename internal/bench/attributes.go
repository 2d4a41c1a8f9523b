package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
)

// AttributeSpec shapes a synthetic memory graph.
type AttributeSpec struct {
	Attributes int // total attributes
	Agents     int // default 8
	// MaxSiblings caps an aspect's size; sizes follow a Zipf law (most
	// aspects hold one or two attributes, a few hold thousands, as Signet
	// observed: 1,197 in one aspect).
	MaxSiblings int // default 3000
	// ContradictionShare is the share of attributes planted as a newer
	// value of a one-value slot already present in the aspect (a real
	// contradiction the sweep must find). Big aspects get at most one per
	// slot, so the realised share is reported, not assumed.
	ContradictionShare float64 // default 0.05
	Seed               uint64  // default 1
}

// AttributeStats says what was generated.
type AttributeStats struct {
	Attributes          int `json:"attributes"`
	Aspects             int `json:"aspects"`
	AspectsWithSiblings int `json:"aspects_with_siblings"`
	LargestAspect       int `json:"largest_aspect"`
	Pairs               int `json:"pairs"`
	Contradictions      int `json:"planted_contradictions"`
	Constraints         int `json:"constraints"`
	Protected           int `json:"protected"`
}

// Vocabulary for statements. One-value slots can contradict; many-value
// predicates never do, whatever their values.
var (
	cities    = strings.Fields("Toronto Vancouver Montreal Calgary Ottawa Halifax Lisbon Porto Madrid Barcelona Berlin Munich Hamburg Vienna Zurich Geneva Paris Lyon Marseille Brussels Amsterdam Rotterdam Copenhagen Oslo Bergen Stockholm Helsinki Tallinn Riga Vilnius Warsaw Krakow Prague Budapest Athens Rome Milan Naples Turin Dublin Cork Edinburgh Glasgow London Bristol Manchester Leeds Boston Chicago Denver Austin Seattle Portland Atlanta Miami Tokyo Osaka Kyoto Seoul Busan Taipei Singapore Sydney Melbourne Auckland Wellington Lima Bogota Santiago Montevideo Nairobi Lagos Accra Cairo Tunis Casablanca Istanbul Tbilisi Yerevan Almaty Tashkent Mumbai Pune Delhi Chennai Dhaka Hanoi Manila Jakarta")
	companies = strings.Fields("Shopify Stripe Figma Atlassian Canva Spotify Klarna Adyen Zalando Booking Ocado Monzo Revolut Wise Deliveroo Grab Sea Rakuten Mercari Naver Kakao Coupang Infosys Wipro Nubank Rappi MercadoLibre Globant Andela Flutterwave Paystack Jumia Careem Trendyol Yandex Miro Notion Linear Vercel Supabase GitLab Elastic Datadog Cloudflare Fastly Twilio Okta Zendesk Intercom HubSpot Asana")
	people    = strings.Fields("Dana Priya Alex Jordan Morgan Casey Riley Avery Quinn Rowan Sasha Kai Noor Amari Imani Tomas Lucia Mateo Sofia Yuki Haruto Min-jun Ji-woo Arjun Ananya Chen Wei Olga Ivan Lena Jonas Freya Emil Astrid Liam Maya Omar Layla Kofi Ama")
	zones     = strings.Fields("America/Toronto America/Vancouver Europe/Lisbon Europe/Berlin Europe/Paris Asia/Tokyo Asia/Seoul Australia/Sydney America/Chicago America/New_York Europe/London Asia/Singapore")
	favorites = []struct{ category, values string }{
		{"food", "sushi ramen tacos pizza curry pho paella dumplings falafel risotto"},
		{"band", "Radiohead Blur Pulp Portishead Massive-Attack Bjork Interpol Wilco Beirut Feist"},
		{"book", "Dune Emma Middlemarch Beloved Ulysses Persuasion Rebecca Kindred Solaris Stoner"},
		{"movie", "Alien Heat Fargo Amelie Ran Vertigo Psycho Jaws Her Arrival"},
		{"colour", "teal amber crimson ochre indigo sage coral slate mauve olive"},
		{"season", "spring summer autumn winter"},
		{"drink", "espresso matcha chai kombucha lemonade cider stout mezcal oolong horchata"},
		{"board game", "Catan Azul Carcassonne Wingspan Splendor Codenames Dixit Agricola Root Patchwork"},
		{"podcast", "Radiolab Serial Reply-All Planet-Money Hardcore-History Darknet-Diaries Criminal Invisibilia Unexplainable Decoder"},
		{"painter", "Monet Vermeer Hokusai Kahlo Klimt Turner Hopper Rothko Matisse Cezanne"},
		{"holiday spot", "Crete Bali Madeira Hokkaido Patagonia Iceland Sardinia Zanzibar Tasmania Skye"},
		{"sport to watch", "football tennis cricket rugby baseball hockey cycling basketball volleyball golf"},
	}
	editors   = strings.Fields("Neovim Emacs Helix Zed Sublime VS-Code IntelliJ Xcode Kakoune Nano")
	languages = strings.Fields("French Japanese Korean Spanish Portuguese German Italian Dutch Swedish Polish Czech Greek Turkish Arabic Hindi Bengali Tamil Swahili Yoruba Mandarin Cantonese Vietnamese Thai Indonesian Tagalog Russian Ukrainian Finnish Danish Norwegian")
	foods     = strings.Fields("olives figs mangoes lychees kimchi miso tempeh halloumi brie gouda sourdough bagels croissants churros baklava mochi tiramisu gelato sorbet granola")
	items     = strings.Fields("bicycle kayak telescope drone piano violin guitar cello turntable camera tent hammock skateboard snowboard surfboard sewing-machine 3D-printer espresso-machine e-reader tablet")
	games     = strings.Fields("tennis squash badminton chess go poker bridge volleyball basketball football hockey golf cricket rugby handball table-tennis darts pool bowling frisbee")
	years     = []int{2008, 2009, 2010, 2011, 2012, 2013, 2014, 2015, 2016, 2017, 2018, 2019, 2020, 2021, 2022, 2023, 2024, 2025}
)

// oneValueSlots returns statement makers for slots that hold one value: the
// i-th value of slot s. Each yields distinct values for distinct i.
func oneValueSlots() []func(i int) string {
	slots := []func(i int) string{
		func(i int) string { return "Lives in " + cities[i%len(cities)] },
		func(i int) string { return "Works at " + companies[i%len(companies)] },
		func(i int) string { return "Reports to " + people[i%len(people)] },
		func(i int) string { return "Timezone is " + zones[i%len(zones)] },
		func(i int) string { return "Main editor is " + editors[i%len(editors)] },
		func(i int) string { return "Is married to " + people[(i+7)%len(people)] },
		func(i int) string { return fmt.Sprintf("Rent is $%d a month", 1200+i*75) },
	}
	for _, f := range favorites {
		vals := strings.Fields(f.values)
		cat := f.category
		slots = append(slots, func(i int) string {
			return "Favourite " + cat + " is " + strings.ReplaceAll(vals[i%len(vals)], "-", " ")
		})
	}
	return slots
}

// manyValue returns the n-th distinct many-value statement.
func manyValue(n int) string {
	switch n % 6 {
	case 0:
		k := n / 6
		return fmt.Sprintf("Visited %s in %d", cities[k%len(cities)], years[(k/len(cities))%len(years)])
	case 1:
		k := n / 6
		return fmt.Sprintf("Knows %s from the %s office", people[k%len(people)], cities[(k/len(people))%len(cities)])
	case 2:
		k := n / 6
		return "Speaks " + languages[k%len(languages)] + suffix(k/len(languages))
	case 3:
		k := n / 6
		return "Likes " + foods[k%len(foods)] + suffix(k/len(foods))
	case 4:
		k := n / 6
		return "Owns a " + strings.ReplaceAll(items[k%len(items)], "-", " ") + suffix(k/len(items))
	default:
		k := n / 6
		return "Plays " + strings.ReplaceAll(games[k%len(games)], "-", " ") + suffix(k/len(games))
	}
}

// suffix keeps many-value statements distinct once the base lists run out.
func suffix(round int) string {
	if round == 0 {
		return ""
	}
	return fmt.Sprintf(" with friends from %s", cities[round%len(cities)])
}

// GenerateAttributes fills entities, entity_aspects and entity_attributes
// with COPY. The classification trigger is disabled during the load (a
// backfill is not a stream of classifications) and enabled again after.
func GenerateAttributes(ctx context.Context, db *sqlx.DB, spec AttributeSpec) (AttributeStats, error) {
	var rows graphRows
	st := Aspects(spec, rows.add)
	if err := rows.write(ctx, db); err != nil {
		return st, err
	}
	_, err := db.ExecContext(ctx, `ANALYZE entities; ANALYZE entity_aspects; ANALYZE entity_attributes`)
	return st, err
}

// GeneratedAspect is one aspect of the generated graph, as rows: its
// entity's (when it is the entity's first aspect), its own, and its
// attributes', oldest first (id, aspect_id, agent_id, kind, content,
// normalized_content, confidence, protected, created_at, updated_at).
type GeneratedAspect struct {
	ID     string
	Entity []any // nil unless the aspect is its entity's first
	Aspect []any
	Attrs  [][]any
}

// Aspects generates the graph aspect by aspect, handing each to f, and
// says what it generated. GenerateAttributes writes what it hands over;
// tests read the bench's own graph in memory (what a change meets, without
// a database).
func Aspects(spec AttributeSpec, f func(GeneratedAspect)) AttributeStats {
	g := newAttributeGenerator(spec)
	for a := 0; g.st.Attributes < g.spec.Attributes; a++ {
		f(g.aspect(a))
	}
	return g.st
}

// graphRows are the generated rows GenerateAttributes copies (one COPY at
// a time per connection).
type graphRows struct{ ents, asps, attrs [][]any }

func (r *graphRows) add(a GeneratedAspect) {
	if a.Entity != nil {
		r.ents = append(r.ents, a.Entity)
	}
	r.asps = append(r.asps, a.Aspect)
	r.attrs = append(r.attrs, a.Attrs...)
}

// attributeGenerator draws a graph's aspects.
type attributeGenerator struct {
	spec  AttributeSpec
	r     *rand.Rand
	zipf  *rand.Zipf
	slots []func(int) string
	st    AttributeStats
}

var attributeBase = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

func newAttributeGenerator(spec AttributeSpec) *attributeGenerator {
	if spec.Agents <= 0 {
		spec.Agents = 8
	}
	if spec.MaxSiblings <= 1 {
		spec.MaxSiblings = 3000
	}
	if spec.ContradictionShare == 0 {
		spec.ContradictionShare = 0.05
	}
	if spec.Seed == 0 {
		spec.Seed = 1
	}
	r := rand.New(rand.NewPCG(spec.Seed, 0x5eed))
	return &attributeGenerator{spec: spec, r: r, zipf: rand.NewZipf(r, 1.3, 1, uint64(spec.MaxSiblings-1)), slots: oneValueSlots()}
}

// aspect generates aspect number a: its size from the Zipf law, its
// planted contradictions (old, new pairs on distinct one-value slots, the
// newer halves last) and many-valued fillers. Entities group four aspects,
// all of one agent.
func (g *attributeGenerator) aspect(a int) GeneratedAspect {
	n := min(int(g.zipf.Uint64())+1, g.spec.Attributes-g.st.Attributes)
	agent := fmt.Sprintf("agent-%02d", (a/4)%g.spec.Agents)
	entity, aspect := fmt.Sprintf("e%d", a/4), fmt.Sprintf("asp%d", a)
	out := GeneratedAspect{ID: aspect, Aspect: []any{aspect, entity, agent, "aspect " + aspect, aspect}}
	if a%4 == 0 {
		out.Entity = []any{entity, agent, "Entity " + entity, "person"}
	}
	g.st.Aspects++
	if n >= 2 {
		g.st.AspectsWithSiblings++
		g.st.Pairs += n * (n - 1) / 2
	}
	g.st.LargestAspect = max(g.st.LargestAspect, n)
	want := min(int(float64(n)*g.spec.ContradictionShare+g.r.Float64()), len(g.slots), n/2)
	contents, order := g.plan(n, want)
	g.st.Contradictions += want
	for k, idx := range order {
		g.st.Attributes++
		kind, content, protected := "attribute", contents[idx], false
		if filler := idx >= 2*want; filler && g.r.IntN(200) == 0 { // planted pairs come first in contents
			kind, content = "constraint", "Never "+strings.ToLower(content[:1])+content[1:]
			g.st.Constraints++
		} else if filler && g.r.IntN(400) == 0 {
			protected = true
			g.st.Protected++
		}
		at := attributeBase.Add(time.Duration(a)*time.Second + time.Duration(k)*time.Hour)
		out.Attrs = append(out.Attrs, []any{fmt.Sprintf("b%d", g.st.Attributes), aspect, agent, kind, content,
			strings.ToLower(content), 0.9, protected, at, at})
	}
	return out
}

// plan returns an aspect's contents and the order they are created in:
// olds and fillers shuffled, then the planted newer values.
func (g *attributeGenerator) plan(n, want int) ([]string, []int) {
	perm := g.r.Perm(len(g.slots))
	var contents []string
	newer := map[int]bool{}
	var planted []int
	for c := 0; c < want; c++ {
		v := g.r.IntN(1000)
		contents = append(contents, g.slots[perm[c]](v), g.slots[perm[c]](v+1))
		planted = append(planted, len(contents)-1)
		newer[len(contents)-1] = true
	}
	offset := g.r.IntN(1 << 20)
	for f := 0; len(contents) < n; f++ {
		contents = append(contents, manyValue(offset+f))
	}
	order := make([]int, 0, n)
	for i := range contents {
		if !newer[i] {
			order = append(order, i)
		}
	}
	g.r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	return contents, append(order, planted...)
}

// write copies the rows in one transaction, without the classification
// trigger (a generated graph is not a stream of classifications).
func (r *graphRows) write(ctx context.Context, db *sqlx.DB) error {
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `ALTER TABLE entity_attributes DISABLE TRIGGER supersessiond_attribute_classified`); err != nil {
		return fmt.Errorf("bench: disable trigger: %w", err)
	}
	if err := copyRows(ctx, tx, `COPY entities (id, agent_id, name, entity_type) FROM STDIN`, r.ents); err != nil {
		return err
	}
	if err := copyRows(ctx, tx, `COPY entity_aspects (id, entity_id, agent_id, name, canonical_name) FROM STDIN`, r.asps); err != nil {
		return err
	}
	if err := copyRows(ctx, tx, `COPY entity_attributes (id, aspect_id, agent_id, kind, content,
		normalized_content, confidence, protected, created_at, updated_at) FROM STDIN`, r.attrs); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `ALTER TABLE entity_attributes ENABLE TRIGGER supersessiond_attribute_classified`); err != nil {
		return err
	}
	return tx.Commit()
}

// copyRows streams rows into a COPY statement.
func copyRows(ctx context.Context, tx *sqlx.Tx, copySQL string, rows [][]any) error {
	stmt, err := tx.PrepareContext(ctx, copySQL)
	if err != nil {
		return fmt.Errorf("bench: %s: %w", copySQL, err)
	}
	for _, r := range rows {
		if _, err := stmt.ExecContext(ctx, r...); err != nil {
			return fmt.Errorf("bench: %s: %w", copySQL, err)
		}
	}
	if _, err := stmt.ExecContext(ctx); err != nil {
		return fmt.Errorf("bench: %s: %w", copySQL, err)
	}
	return stmt.Close()
}
