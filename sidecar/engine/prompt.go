package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/safepath"
	"github.com/agentcanvas/agentcanvas/sidecar/skill"
)

// message is a prompt in the standard message format of spec §2.1.
type message struct {
	Intent    string
	Inputs    []string
	Plan      []string
	Actions   []string // what the agent must produce, including structured lines
	Questions []string
}

// prompt renders m for node: the rule chain and the node's rules and skills first, then the
// five sections, then how to reply (spec §2.2) so the runtime can read it.
func (c *ictx) prompt(node string, m message) string {
	var b strings.Builder
	n, _ := c.r.f.NodeByID(node)
	name, role := node, c.roles[node]
	if n.Agent != nil && n.Agent.Name != "" {
		name = n.Agent.Name
	} else if n.System != nil && n.System.Name != "" {
		name = n.System.Name
	}
	fmt.Fprintf(&b, "You are %s (id %s, role %s) in the AgentCanvas flow %q, interaction %s (pattern %s), round %d.\n", name, node, firstNonEmpty(role, "agent"), c.r.f.Name, c.in.ID, c.pat, c.st.Round+1)
	if n.Agent != nil && n.Agent.Instructions != "" {
		b.WriteString("\n## Your instructions\n" + strings.TrimSpace(n.Agent.Instructions) + "\n")
	}
	if rules := c.rules(n); rules != "" {
		b.WriteString("\n## Rules (in order; later rules refine earlier ones)\n" + rules)
	}
	if skills := c.skills(n); skills != "" {
		b.WriteString("\n## Skills you may use\n" + skills)
	}
	if mem := c.r.files.memory(); mem != "" {
		b.WriteString("\n## Workspace memory (MEMORY.md)\n" + mem + "\n")
	}
	b.WriteString("\n## Message\n")
	fmt.Fprintf(&b, "1. Intent\n%s\n", m.Intent)
	b.WriteString("2. Inputs\n")
	if f := c.lastFailure(node); f != "" { // its tests failed: it is told what failed, bounded
		m.Inputs = append(m.Inputs, f)
	}
	for _, in := range m.Inputs {
		b.WriteString(indentBullet(in))
	}
	if len(m.Inputs) == 0 {
		b.WriteString("- (none)\n")
	}
	b.WriteString("3. Plan\n")
	for i, p := range m.Plan {
		fmt.Fprintf(&b, "%d. %s\n", i+1, p)
	}
	b.WriteString("4. Actions\n")
	for _, a := range m.Actions {
		b.WriteString(indentBullet(a))
	}
	b.WriteString("5. Open Questions\n")
	if len(m.Questions) == 0 {
		b.WriteString("- none\n")
	}
	for _, q := range m.Questions {
		b.WriteString(indentBullet(q))
	}
	b.WriteString("\n## How to reply\nReply in the standard response format: 1. Intent, 2. Assumptions/Inputs, 3. Plan, 4. Actions/Artifacts, 5. Risks/Safety Notes, 6. Next Steps or DONE. " +
		"Put the structured lines asked for above on lines of their own. If you need a decision from the user, print a [USER_QUESTION] block; if you need a secret, file, permission or package, print a [DEPENDENCY_REQUEST] block; never guess a secret.\n")
	if isWorker(role) {
		b.WriteString("Work only inside your sandbox work folder (your current directory). When you changed files, end with a HANDOFF block naming SandboxWorkDir, ProposalJson, ChangedFiles, DoD and Tests.\n")
	}
	return b.String()
}

func indentBullet(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return "- " + strings.Join(lines, "\n  ") + "\n"
}

// rules resolves the rule chain: commonRules.ruleChainRefs (KIND:path; PROJECT paths are
// read from the workspace through its root, ~ paths from the user's home), the flow's
// common rules, then the node's own rules.
func (c *ictx) rules(n flow.Node) string {
	var b strings.Builder
	for _, ref := range c.r.f.CommonRules.RuleChainRefs {
		kind, p, ok := strings.Cut(ref, ":")
		if !ok {
			kind, p = "PROJECT", ref
		}
		text, err := c.r.files.rule(p)
		if err != nil {
			fmt.Fprintf(&b, "- [%s %s] (not read: %v)\n", kind, p, err)
			continue
		}
		fmt.Fprintf(&b, "- [%s %s]\n%s\n", kind, p, indent(truncate(text, 6000)))
	}
	for _, r := range c.r.f.CommonRules.Rules {
		b.WriteString(indentBullet(r))
	}
	if n.Agent != nil {
		for _, r := range n.Agent.Rules {
			b.WriteString(indentBullet(r))
		}
	}
	return b.String()
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ")
}

func readRuleFile(root *os.Root, p string) (string, error) {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		b, err := os.ReadFile(filepath.Join(home, filepath.FromSlash(rest)))
		return string(b), err
	}
	clean, err := safepath.Clean(p, safepath.Rules{})
	if err != nil {
		return "", err
	}
	b, err := root.ReadFile(clean)
	return string(b), err
}

// skills lists the node's skills with their descriptions, leaving out every skill marked
// disable-model-invocation: such a skill is never offered to a model (spec §7.2).
func (c *ictx) skills(n flow.Node) string {
	if n.Agent == nil {
		return ""
	}
	var b strings.Builder
	for _, name := range n.Agent.Skills {
		sk := c.r.files.skill(name)
		if sk == nil {
			continue
		}
		if sk.DisableModelInvocation {
			if c.r.firstTime("hidden skill " + name + " " + n.ID) {
				c.r.emit(c.in.ID, "", "warning", map[string]any{"agent": n.ID, "message": fmt.Sprintf("skill %s is marked disable-model-invocation and is not offered to %s (a person can run it: Invoke Skill)", name, n.ID)})
			}
			continue
		}
		fmt.Fprintf(&b, "- %s: %s (instructions: %s)\n", name, sk.Description, skill.File(name))
	}
	return b.String()
}

// promptFiles are the workspace files prompts carry, read through one workspace root per
// run: rule files and skills' front matter once, when first needed (a run's rules do not
// change under it), and MEMORY.md again only when a stat says it changed (size, time or
// file: curators rewrite it during runs). Every prompt used to open the workspace and read
// them all, which cost more than a small agent turn.
type promptFiles struct {
	ws   string
	once sync.Once
	root *os.Root // nil when the workspace cannot be opened
	err  error

	mu     sync.Mutex
	rules  map[string]ruleText
	skills map[string]*skill.Skill // nil: missing or invalid (the validator says why)
	memFI  os.FileInfo             // of memText; nil: not read
	memTxt string
}

type ruleText struct {
	text string
	err  error
}

func (p *promptFiles) open() *os.Root {
	p.once.Do(func() { p.root, p.err = os.OpenRoot(p.ws) })
	return p.root
}

// close releases the workspace root at the end of the run (not opening it if no prompt did).
func (p *promptFiles) close() {
	p.once.Do(func() { p.err = errors.New("the run has ended") })
	if p.root != nil {
		p.root.Close()
	}
}

func (p *promptFiles) rule(path string) (string, error) {
	root := p.open()
	p.mu.Lock()
	defer p.mu.Unlock()
	if r, ok := p.rules[path]; ok {
		return r.text, r.err
	}
	var r ruleText
	if root == nil {
		r.err = p.err
	} else {
		r.text, r.err = readRuleFile(root, path)
	}
	if p.rules == nil {
		p.rules = map[string]ruleText{}
	}
	p.rules[path] = r
	return r.text, r.err
}

func (p *promptFiles) skill(name string) *skill.Skill {
	root := p.open()
	if root == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if s, ok := p.skills[name]; ok {
		return s
	}
	s, _ := skill.Load(root, name)
	if p.skills == nil {
		p.skills = map[string]*skill.Skill{}
	}
	p.skills[name] = s
	return s
}

// memory returns MEMORY.md, for prompts ("" when there is none).
func (p *promptFiles) memory() string {
	root := p.open()
	if root == nil {
		return ""
	}
	name := filepath.Join(MemoryDir, "MEMORY.md")
	fi, err := root.Stat(name)
	if err != nil {
		return ""
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.memFI != nil && os.SameFile(p.memFI, fi) && p.memFI.Size() == fi.Size() && p.memFI.ModTime().Equal(fi.ModTime()) {
		return p.memTxt
	}
	b, err := root.ReadFile(name)
	if err != nil {
		return ""
	}
	p.memFI, p.memTxt = fi, truncate(string(b), 8000)
	return p.memTxt
}
