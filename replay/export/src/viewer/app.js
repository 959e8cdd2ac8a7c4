// planlog's time-travel viewer: a session list, and one session's plan at any seq with its
// event, its diff and every item's lifeline. Plain DOM code: every text from the store is set
// with textContent (never parsed as markup). Data comes from the server's /api/, or from the
// JSON an exported file carries (#planlog-data).
'use strict';
(function () {
  const SVG = 'http://www.w3.org/2000/svg';
  const STATUS = { pending: '○', in_progress: '▶', completed: '✔', cancelled: '⊘' };
  const meta = (name) => { const m = document.querySelector('meta[name="' + name + '"]'); return m ? m.getAttribute('content') : null; };
  const mode = meta('planlog-mode') || 'live';
  const token = meta('planlog-token');
  const embedded = document.getElementById('planlog-data');
  const data = embedded ? JSON.parse(embedded.textContent) : null;
  const app = document.getElementById('app');

  // el('div', {class: 'x'}, 'text', child): attributes are set one by one, texts are text nodes.
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'onclick' || k === 'oninput' || k === 'onkeydown') node[k] = v; else node.setAttribute(k, v === true ? '' : String(v));
    }
    for (const c of children.flat(Infinity)) {
      if (c === null || c === undefined || c === false) continue;
      node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return node;
  }
  function svg(tag, attrs) {
    const node = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    return node;
  }
  const enc = encodeURIComponent;

  async function getJSON(url) {
    const r = await fetch(url, { headers: { Accept: 'application/json' } });
    const body = await r.json();
    if (!r.ok) throw new Error(body.error || r.statusText);
    return body;
  }

  const api = data ? {
    sessions: async () => data.sessions,
    events: async (id) => data.events[id] || [],
    search: async (q) => localSearch(q),
    fork: null,
  } : {
    sessions: () => getJSON('/api/sessions'),
    events: (id) => getJSON('/api/sessions/' + enc(id) + '/events'),
    search: (q) => getJSON('/api/search?q=' + enc(q)),
    fork: async (id, at, label) => {
      const r = await fetch('/api/sessions/' + enc(id) + '/fork', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Planlog-Token': token || '' },
        body: JSON.stringify({ at, label: label || null }),
      });
      const body = await r.json();
      if (!r.ok) throw new Error(body.error || r.statusText);
      return body.id;
    },
  };
  const canFork = mode === 'live' && api.fork;

  function localSearch(q) {
    const needle = q.toLowerCase();
    const hits = [];
    for (const [id, events] of Object.entries(data.events)) {
      for (const e of events) {
        const texts = (e.plan || []).map((i) => i.content).concat(e.code && e.message ? [e.message] : []);
        const t = texts.find((x) => x.toLowerCase().includes(needle));
        if (t) hits.push({ session: id, seq: e.seq, text: t });
      }
    }
    return hits.slice(0, 100);
  }

  // A session's name: its title, else its first prompt, else its label, else its id.
  function nameOf(s) {
    const d = s.description || {};
    return d.title || d.first_prompt || s.label || s.id;
  }

  // What the source says a session is, in one line: agent and version, project, branch, model.
  function describedText(d) {
    if (!d) return '';
    const parts = [];
    if (d.agent) parts.push(d.agent + (d.agent_version ? ' ' + d.agent_version : '') + (d.entrypoint ? ' (' + d.entrypoint + ')' : ''));
    if (d.project) parts.push('project ' + d.project);
    if (d.branch) parts.push('branch ' + d.branch);
    if (d.model) parts.push('model ' + d.model);
    return parts.join(' · ');
  }

  // A duration in ms as people read it: 850 ms, 12 s, 4 min 05 s, 2 h 03 min, 3 d 4 h.
  function duration(ms) {
    if (!(ms >= 0)) return '';
    if (ms < 1000) return ms + ' ms';
    const s = Math.floor(ms / 1000);
    if (s < 60) return s + ' s';
    const m = Math.floor(s / 60);
    if (m < 60) return m + ' min ' + String(s % 60).padStart(2, '0') + ' s';
    const h = Math.floor(m / 60);
    if (h < 24) return h + ' h ' + String(m % 60).padStart(2, '0') + ' min';
    return Math.floor(h / 24) + ' d ' + (h % 24) + ' h';
  }

  function originText(s) {
    const o = s.origin || {};
    switch (o.type) {
      case 'fork': return 'fork of ' + o.parent + ' at seq ' + o.at;
      case 'sub_agent': return 'sub-agent of ' + o.parent;
      case 'import': return (o.parent ? 'sub-agent of ' + o.parent + ', ' : '') + 'imported from ' + o.source;
      default: return 'new';
    }
  }

  // ---- the session list ----
  async function showList() {
    document.getElementById('where').textContent = 'sessions';
    const sessions = await api.sessions();
    const byId = new Map(sessions.map((s) => [s.id, s]));
    const children = new Map();
    const roots = [];
    for (const s of sessions) {
      const parent = s.origin && s.origin.parent;
      if (parent && byId.has(parent)) {
        if (!children.has(parent)) children.set(parent, []);
        children.get(parent).push(s);
      } else roots.push(s);
    }
    const filter = el('input', { type: 'search', id: 'filter', placeholder: 'Filter sessions' });
    const search = el('input', { type: 'search', id: 'search', placeholder: 'Search items and refusals' });
    const results = el('ul', { id: 'results' });
    const tree = el('ul', { class: 'tree', id: 'session-list' });
    const row = (s) => el('div', { class: 'row' },
      el('a', { class: 'name', href: '#/s/' + enc(s.id), 'data-id': s.id }, nameOf(s)),
      el('span', { class: 'small muted' }, nameOf(s) !== s.id ? s.id : ''),
      el('span', { class: 'small' }, originText(s)),
      el('span', { class: 'small muted described' }, describedText(s.description)),
      el('span', { class: 'bar', title: s.done + ' of ' + s.total + ' done' }, el('span', { style: null })),
      el('span', { class: 'small' }, s.done + '/' + s.total + ' done · ' + s.events + ' events · ' + s.updated));
    const branch = (s) => {
      const li = el('li', { 'data-id': s.id, 'data-text': (s.id + ' ' + nameOf(s) + ' ' + (s.label || '') + ' ' + describedText(s.description)).toLowerCase() }, row(s));
      const width = s.total ? Math.round((100 * s.done) / s.total) : 0;
      li.querySelector('.bar > span').style.width = width + '%';
      const kids = children.get(s.id);
      if (kids) li.append(el('ul', {}, kids.map(branch)));
      return li;
    };
    // The most recently updated first, as `planlog sessions` lists them.
    const recent = (a, b) => (a.updated < b.updated ? 1 : a.updated > b.updated ? -1 : a.id < b.id ? -1 : 1);
    roots.sort(recent);
    for (const kids of children.values()) kids.sort(recent);
    roots.forEach((s) => tree.append(branch(s)));
    filter.oninput = () => {
      const q = filter.value.toLowerCase();
      for (const li of tree.querySelectorAll('li')) li.hidden = q !== '' && !li.textContent.toLowerCase().includes(q) && !li.dataset.text.includes(q);
    };
    search.onkeydown = async (ev) => {
      if (ev.key !== 'Enter') return;
      results.replaceChildren();
      const q = search.value.trim();
      if (!q) return;
      try {
        const hits = await api.search(q);
        if (!hits.length) results.append(el('li', { class: 'muted' }, 'nothing found'));
        for (const h of hits) results.append(el('li', {}, el('a', { href: '#/s/' + enc(h.session) + '/' + h.seq }, h.session + ' seq ' + h.seq), ' ', h.text));
      } catch (e) { results.append(el('li', { class: 'error' }, e.message)); }
    };
    app.replaceChildren(
      el('div', { class: 'toolbar' }, filter, search),
      results,
      sessions.length ? tree : el('p', { class: 'muted' }, 'No sessions in this store yet.'),
    );
  }

  // ---- one session ----
  let current = null; // {id, events, plans, seq}

  function plansOf(events) {
    const plans = [];
    let plan = [];
    for (const e of events) {
      if (e.plan) plan = e.plan;
      plans[e.seq] = plan;
    }
    return plans;
  }

  let navigation = 0; // answers of an older navigation are dropped

  async function showSession(id, seq) {
    const mine = ++navigation;
    const [sessions, events] = await Promise.all([api.sessions(), api.events(id)]);
    if (mine !== navigation) return;
    const info = sessions.find((s) => s.id === id);
    if (!info || !events.length) {
      app.replaceChildren(el('p', { class: 'error' }, 'No session ' + id + ' in this store.'));
      return;
    }
    const last = events[events.length - 1].seq;
    const forks = sessions.filter((s) => s.origin && s.origin.type === 'fork' && s.origin.parent === id);
    current = { id, info, forks, events, plans: plansOf(events), seq: Math.min(Math.max(seq || last, 1), last) };
    document.getElementById('where').textContent = nameOf(info);
    render();
  }

  function go(seq) {
    if (!current) return;
    const last = current.events[current.events.length - 1].seq;
    current.seq = Math.min(Math.max(seq, 1), last);
    history.replaceState(null, '', '#/s/' + enc(current.id) + '/' + current.seq);
    render();
  }

  function render() {
    const { id, info, forks, events, plans, seq } = current;
    const last = events[events.length - 1].seq;
    const event = events.find((e) => e.seq === seq);
    const o = info.origin || {};
    const head = el('div', { class: 'session-head' },
      el('h2', { id: 'session-title' }, nameOf(info)),
      info.description ? el('div', { class: 'small', id: 'session-described' }, describedText(info.description)) : null,
      el('div', { class: 'small muted' }, id, ' · ',
        o.type === 'fork'
          ? el('span', {}, 'forked from ', el('a', { id: 'parent-link', href: '#/s/' + enc(o.parent) + '/' + o.at }, o.parent), ' at seq ' + o.at)
          : originText(info)),
      forks && forks.length ? el('div', { class: 'small', id: 'forks' }, 'forks: ',
        forks.map((f, i) => [i ? ', ' : '', el('a', { href: '#/s/' + enc(f.id), 'data-id': f.id }, nameOf(f)), ' at seq ' + f.origin.at])) : null);
    const scrubber = el('input', { type: 'range', id: 'scrubber', min: 1, max: last, value: seq, step: 1 });
    scrubber.oninput = () => go(Number(scrubber.value));
    const controls = el('div', { class: 'toolbar scrub' },
      el('button', { id: 'prev', title: 'Previous event (←)', onclick: () => go(current.seq - 1) }, '◀'),
      scrubber,
      el('button', { id: 'next', title: 'Next event (→)', onclick: () => go(current.seq + 1) }, '▶'),
      el('span', { id: 'seq-label' }, 'seq ' + seq + ' of ' + last));
    if (canFork) {
      const label = el('input', { type: 'text', id: 'fork-label', placeholder: 'fork label (optional)' });
      const status = el('span', { id: 'fork-status', class: 'small' });
      const button = el('button', { id: 'fork-button', onclick: async () => {
        try {
          const fork = await api.fork(id, current.seq, label.value.trim());
          location.hash = '#/s/' + enc(fork);
        } catch (e) { status.textContent = e.message; status.className = 'small error'; }
      } }, 'Fork here');
      controls.append(label, button, status);
    }
    app.replaceChildren(head, controls, marks(events, seq, last, forks || []),
      el('div', { class: 'panels' }, planPanel(plans[seq] || [], plans[seq - 1] || [], seq), eventPanel(event, events)),
      lifelines(events, plans, seq, last));
  }

  function marks(events, seq, last, forks) {
    const width = Math.max(300, Math.min(1200, last * 14));
    const step = width / last;
    const s = svg('svg', { id: 'marks', width, height: 30, role: 'img' });
    // Where forks left this session: a triangle under the seq they start from.
    for (const f of forks) {
      const x = (f.origin.at - 0.5) * step;
      const t = svg('path', { class: 'fork-mark', d: 'M' + (x - 4) + ' 30 L' + (x + 4) + ' 30 L' + x + ' 22 Z', 'data-fork': f.id });
      const title = svg('title', {});
      title.textContent = 'fork ' + (f.label || f.id) + ' leaves after seq ' + f.origin.at;
      t.append(title);
      t.addEventListener('click', () => { location.hash = '#/s/' + enc(f.id); });
      s.append(t);
    }
    const start = Date.parse(events[0].at);
    events.forEach((e, i) => {
      const m = svg('rect', { class: 'mark kind-' + e.kind + (e.kind === 'write_rejected' ? ' rejected-mark' : ''), x: (e.seq - 1) * step + 1, y: 4, width: Math.max(2, step - 2), height: 14, 'data-seq': e.seq });
      const title = svg('title', {});
      const gap = i ? Date.parse(e.at) - Date.parse(events[i - 1].at) : null;
      title.textContent = 'seq ' + e.seq + ': ' + e.kind + (e.code ? ' (' + e.code + ')' : '') +
        ' · ' + duration(Date.parse(e.at) - start) + ' in' + (gap !== null ? ' · ' + duration(gap) + ' after seq ' + events[i - 1].seq : '');
      m.append(title);
      m.addEventListener('click', () => go(e.seq));
      s.append(m);
      // A long pause before an event (an hour or more) is marked above it.
      if (gap !== null && gap >= 3600 * 1000) s.append(svg('rect', { class: 'gap-mark', x: (e.seq - 1) * step, y: 0, width: 2, height: 3 }));
    });
    s.append(svg('line', { class: 'cursor', x1: (seq - 0.5) * step, x2: (seq - 0.5) * step, y1: 0, y2: 22 }));
    return s;
  }

  function planPanel(plan, before, seq) {
    const old = new Map(before.map((i) => [i.id, JSON.stringify(i)]));
    const open = (item) => (item.blocked_by || []).filter((b) => { const x = plan.find((i) => i.id === b); return !x || x.status !== 'completed'; });
    const rows = plan.map((item) => {
      const extras = [];
      const blockers = open(item);
      if (blockers.length) extras.push('⧗ blocked by ' + blockers.join(', '));
      if (item.owner) extras.push('owner ' + item.owner);
      return el('tr', { 'data-item': item.id, class: old.get(item.id) === JSON.stringify(item) ? null : 'changed' },
        el('td', { class: 'status s-' + item.status, title: item.status }, STATUS[item.status] || '?'),
        el('td', { class: 'id small muted' }, item.id),
        el('td', { class: 'content' }, item.content, extras.length ? el('div', { class: 'small muted' }, extras.join(' · ')) : null));
    });
    return el('section', { class: 'card', id: 'plan' },
      el('h3', {}, 'Plan at seq ' + seq),
      plan.length ? el('table', { id: 'plan-table' }, el('tbody', {}, rows)) : el('p', { class: 'muted', id: 'plan-empty' }, 'The plan is empty.'));
  }

  function pretty(v) { return typeof v === 'string' ? v : JSON.stringify(v, null, 2); }

  // The call as the agent sent it and what the model read (format 4 events keep them).
  function callSection(e) {
    if (e.kind !== 'plan_written' && e.kind !== 'write_rejected') return null;
    const c = e.call;
    if (!c) {
      return [el('h3', {}, 'The call as sent'),
        el('p', { class: 'muted', id: 'call-missing' }, 'Not recorded: this event was written before planlog kept the call as sent (event format 4). What planlog derived from it is below.')];
    }
    const r = c.result;
    let result;
    if (!r) result = el('p', { class: 'muted', id: 'result' }, 'No result: the source holds none for this call.');
    else if (r.text !== undefined && r.text !== null) result = el('pre', { id: 'result', class: r.is_error ? 'rejected' : null }, r.text);
    else if (r.structured !== undefined) result = [el('p', { class: 'small muted' }, 'The text the model read is not in this record: a hook sees the tool\'s structured answer.'), el('pre', { id: 'result', class: r.is_error ? 'rejected' : null }, pretty(r.structured))];
    else result = el('p', { class: 'muted', id: 'result' }, r.is_error ? 'An error, without its text.' : 'No text.');
    return [el('h3', {}, 'The call as sent: ' + c.tool), el('pre', { id: 'call-arguments' }, c.arguments),
      el('h3', {}, 'Result the model read' + (r && r.is_error ? ' (an error)' : '')), result];
  }

  // What planlog derived from the call: the items it set, or why it was refused.
  function derivedSection(e) {
    if (e.kind === 'plan_written') {
      const how = { merge: 'merged into the plan (plan_write)', replace: 'the whole list replaced', upsert: 'these items set', remove: 'these items removed' }[e.semantics] || e.semantics;
      const items = (e.submitted || []).map((i) => el('li', {}, (STATUS[i.status] || '?') + ' ' + i.id + '  ' + i.content));
      return [el('h3', {}, 'What planlog derived: ' + how), el('ul', { id: 'submitted' }, items)];
    }
    if (e.kind === 'write_rejected') {
      const said = e.call && e.call.result && e.call.result.text === e.message;
      return [el('h3', {}, 'What planlog derived: refused (' + e.code + ')'), el('p', { id: 'refusal', class: said ? 'small muted' : 'rejected' }, said ? 'The result above is planlog\'s refusal.' : (e.message || '')),
        el('details', {}, el('summary', { class: 'small' }, 'the submission as recorded'), el('pre', { id: 'submitted' }, pretty(e.submitted)))];
    }
    return null;
  }

  function eventPanel(e, events) {
    const rejected = e.kind === 'write_rejected';
    const i = events.indexOf(e);
    const start = Date.parse(events[0].at);
    const gap = i > 0 ? Date.parse(e.at) - Date.parse(events[i - 1].at) : null;
    const when = duration(Date.parse(e.at) - start) + ' into the session' + (gap !== null ? ' · ' + duration(gap) + ' after the event before' : '');
    const d = e.description;
    const k = e.compaction;
    const dl = el('dl', {},
      el('dt', {}, 'event'), el('dd', { id: 'event-kind', class: rejected ? 'rejected' : null }, e.kind + (rejected ? ': refused (' + e.code + ')' : '')),
      el('dt', {}, 'time'), el('dd', {}, e.at, el('div', { class: 'small muted', id: 'event-when' }, when)),
      e.turn != null ? [el('dt', {}, 'turn'), el('dd', { title: 'The agent turn. In an imported session: how many prompts the user had typed by then.' }, String(e.turn))] : null,
      e.call_id ? [el('dt', {}, 'call id'), el('dd', {}, e.call_id)] : null,
      e.note && !e.differs && !d ? [el('dt', {}, 'note'), el('dd', {}, e.note)] : null,
      e.explanation ? [el('dt', {}, 'explanation'), el('dd', {}, e.explanation)] : null,
      e.source ? [el('dt', {}, 'source'), el('dd', {}, e.source)] : null,
      e.flags && e.flags.length ? [el('dt', {}, 'flags'), el('dd', { class: 'rejected' }, e.flags.join('; '))] : null,
      d ? ['title', 'first_prompt', 'agent', 'agent_version', 'entrypoint', 'project', 'branch', 'model'].filter((f) => d[f]).map((f) => [el('dt', {}, f.replace('_', ' ')), el('dd', {}, d[f])]) : null,
      k ? [el('dt', {}, 'trigger'), el('dd', {}, k.trigger || 'not said'),
        el('dt', {}, 'tokens'), el('dd', {}, (k.tokens_before != null ? k.tokens_before : '?') + ' → ' + (k.tokens_after != null ? k.tokens_after : '?'))] : null);
    return el('section', { class: 'card', id: 'event' },
      el('h3', {}, 'Event ' + e.seq),
      dl,
      e.changes && e.changes.length ? [el('h3', {}, 'Changes from seq ' + (e.seq - 1)), el('ul', { id: 'diff' }, e.changes.map((c) => el('li', {}, c)))] : null,
      callSection(e),
      derivedSection(e),
      e.restored ? [el('h3', {}, 'Put back into the agent\'s context after ' + e.restored.after), el('pre', { id: 'restored' }, e.restored.text)] : null,
      e.kind === 'checkpoint_seen' ? [el('h3', {}, 'The source\'s own list (' + (e.checkpoint || []).length + ' items)' + (e.against ? ', compared with the plan at seq ' + e.against : '')),
        e.differs ? el('p', { class: 'rejected', id: 'differs' }, 'Differs: ' + e.differs) : el('p', { id: 'differs' }, 'Agrees with the plan.')] : null);
  }

  function lifelines(events, plans, seq, last) {
    // Items in order of first appearance, with their state at every seq.
    const order = [];
    const seen = new Set();
    for (let n = 1; n <= last; n++) for (const i of plans[n] || []) if (!seen.has(i.id)) { seen.add(i.id); order.push(i); }
    const cell = Math.max(6, Math.min(60, 1000 / last));
    const label = 220;
    const rowH = 22;
    const top = 18;
    const s = svg('svg', { id: 'lifelines', width: label + cell * last + 10, height: top + Math.max(1, order.length) * rowH + 10, role: 'img' });
    // The seq axis: a number every few seqs.
    const every = Math.max(1, Math.ceil(last / 25));
    for (let n = 1; n <= last; n += every) {
      const t = svg('text', { x: label + (n - 1) * cell + 1, y: 12, class: 'axis' });
      t.textContent = String(n);
      s.append(t);
    }
    order.forEach((first, r) => {
      const y = top + r * rowH + 4;
      const name = svg('text', { x: 4, y: y + 11 });
      const full = first.id + '  ' + first.content;
      name.textContent = full.length > 34 ? full.slice(0, 33) + '…' : full;
      const tip = svg('title', {});
      tip.textContent = full;
      name.append(tip);
      s.append(name);
      let prev = null;
      for (let n = 1; n <= last; n++) {
        const item = (plans[n] || []).find((i) => i.id === first.id);
        const x = label + (n - 1) * cell;
        if (item) {
          const seg = svg('rect', { class: 'seg s-' + item.status, x, y, width: cell, height: rowH - 8, 'data-seq': n, 'data-item': item.id });
          const t = svg('title', {});
          t.textContent = item.id + ' at seq ' + n + ': ' + item.status;
          seg.append(t);
          seg.addEventListener('click', () => go(n));
          s.append(seg);
          if (prev && prev.content !== item.content) s.append(svg('circle', { class: 'edit', cx: x + 2, cy: y + (rowH - 8) / 2, r: 3 }));
          if (prev && JSON.stringify(prev.blocked_by || []) !== JSON.stringify(item.blocked_by || [])) s.append(svg('rect', { class: 'edge', x: x, y: y - 3, width: 4, height: 4 }));
        } else if (prev) {
          s.append(svg('line', { class: 'gone', x1: x, x2: x, y1: y - 2, y2: y + rowH - 6 }));
        }
        prev = item || null;
      }
    });
    s.append(svg('line', { class: 'cursor', x1: label + (seq - 0.5) * cell, x2: label + (seq - 0.5) * cell, y1: top - 4, y2: top + order.length * rowH + 8 }));
    const legend = el('div', { class: 'legend small' },
      el('span', { class: 's-pending' }, '■ pending'), el('span', { class: 's-in_progress' }, '■ in progress'),
      el('span', { class: 's-completed' }, '■ completed'), el('span', { class: 's-cancelled' }, '■ cancelled'),
      el('span', {}, '○ content edited · ▪ dependencies changed · | removed'));
    return el('section', { class: 'card', id: 'lives', style: null }, el('h3', {}, 'Item lifelines'), legend, s);
  }

  document.addEventListener('keydown', (ev) => {
    if (!current || /^(INPUT|TEXTAREA)$/.test(document.activeElement.tagName) && document.activeElement.type !== 'range') return;
    const moves = { ArrowLeft: current.seq - 1, ArrowRight: current.seq + 1, Home: 1, End: Infinity };
    if (ev.key in moves) { ev.preventDefault(); go(moves[ev.key]); }
  });

  // ---- routing and live updates ----
  async function route() {
    const m = location.hash.match(/^#\/s\/([^/]+)(?:\/(\d+))?$/);
    try {
      if (m) await showSession(decodeURIComponent(m[1]), m[2] ? Number(m[2]) : null);
      else if (data && data.sessions.length === 1) location.hash = '#/s/' + enc(data.sessions[0].id);
      else { current = null; navigation++; await showList(); }
    } catch (e) {
      app.replaceChildren(el('p', { class: 'error' }, 'Could not load: ' + e.message));
    }
  }
  window.addEventListener('hashchange', route);
  route();

  if (!data && typeof EventSource === 'function') {
    const stream = new EventSource('/api/stream');
    const badge = document.getElementById('live-badge');
    stream.onopen = () => { badge.hidden = false; };
    stream.onerror = () => { badge.hidden = true; };
    stream.onmessage = async (msg) => {
      const change = JSON.parse(msg.data);
      if (!current) { if (!location.hash.startsWith('#/s/')) await showList(); return; }
      const shown = current;
      if (change.id !== shown.id) return;
      const mine = navigation;
      const [events, sessions] = await Promise.all([api.events(shown.id), api.sessions()]);
      // The page moved on meanwhile: this answer is for a view no longer shown.
      if (current !== shown || mine !== navigation) return;
      const atEnd = shown.seq === shown.events[shown.events.length - 1].seq;
      shown.events = events;
      shown.plans = plansOf(events);
      shown.info = sessions.find((s) => s.id === shown.id) || shown.info;
      shown.forks = sessions.filter((s) => s.origin && s.origin.type === 'fork' && s.origin.parent === shown.id);
      if (atEnd) shown.seq = events[events.length - 1].seq;
      render();
    };
  }
})();
