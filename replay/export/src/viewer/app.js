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

  // What the page reads, a window at a time: from the server, or from the data an exported
  // file carries (the same answers, computed here).
  const api = data ? fileApi(data) : {
    sessions: () => getJSON('/api/sessions'),
    session: (id) => getJSON('/api/sessions/' + enc(id)),
    events: (id, from, limit) => getJSON('/api/sessions/' + enc(id) + '/events?from=' + from + '&limit=' + limit),
    summary: (id, buckets) => getJSON('/api/sessions/' + enc(id) + '/summary?buckets=' + buckets),
    mark: (id, seq, forward, kinds) => getJSON('/api/sessions/' + enc(id) + '/marks?' + (forward ? 'after=' : 'before=') + seq + '&kinds=' + kinds),
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

  // The kind of mark an event leaves (as the server's index has it), or null.
  function markOf(e) {
    if (e.kind === 'write_rejected') return { kind: 'refusal', text: (e.code || '') + ': ' + (e.message || '') };
    if (e.flags && e.flags.length) return { kind: 'flag', text: e.flags.join('; ') };
    if (e.kind === 'context_compacted') return { kind: 'compaction', text: 'context compacted (' + ((e.compaction || {}).trigger || 'trigger not said') + ')' };
    if (e.kind === 'plan_restored') return { kind: 'restore', text: 'plan put back after ' + (e.restored || {}).after };
    return null;
  }

  // The API over an exported file's data: its one session's events are all in the page.
  function fileApi(d) {
    const eventsOf = (id) => d.events[id] || [];
    const info = (id) => d.sessions.find((s) => s.id === id);
    return {
      sessions: async () => d.sessions,
      // A file of a long session holds a window of it (d.window): its seqs are the page's.
      session: async (id) => {
        const s = info(id);
        if (!s) throw new Error('no session ' + id + ' in this file');
        return Object.assign({ forks: [] }, s, d.window ? { events: d.window.to, first: d.window.from, total_events: d.window.last } : {});
      },
      events: async (id, from, limit) => {
        const all = eventsOf(id);
        const first = all.length ? all[0].seq : 1;
        let plan = d.plan_before || [];
        for (const e of all) { if (e.seq >= from) break; if (e.plan) plan = e.plan; }
        return { last: all.length ? all[all.length - 1].seq : 0, from, first, plan_before: plan, events: all.filter((e) => e.seq >= from && e.seq < from + limit) };
      },
      summary: async (id, count) => {
        const all = eventsOf(id);
        const first = all.length ? all[0].seq : 1;
        const last = all.length ? all[all.length - 1].seq : 0;
        const span = last - first + 1;
        const size = Math.max(1, Math.ceil(span / count));
        const buckets = [];
        for (let f = first; f <= last; f += size) buckets.push({ from: f, to: Math.min(last, f + size - 1), refusal: 0, flag: 0, compaction: 0, restore: 0 });
        const marks = [];
        for (const e of all) { const m = markOf(e); if (m) { marks.push({ seq: e.seq, kind: m.kind, text: m.text }); buckets[Math.floor((e.seq - first) / size)][m.kind]++; } }
        return { last, first, indexed: last, buckets, marks, marks_complete: true, forks: [] };
      },
      mark: async (id, seq, forward, kinds) => {
        const wanted = kinds.split(',');
        const events = eventsOf(id);
        const last = events.length ? events[events.length - 1].seq : 0;
        const all = events.map((e) => Object.assign({ seq: e.seq }, markOf(e))).filter((m) => m.kind && wanted.includes(m.kind));
        const m = forward ? all.find((x) => x.seq > seq) : all.reverse().find((x) => x.seq < seq);
        return { mark: m || null, indexed: last, last };
      },
      search: async (q) => localSearch(q),
      fork: null,
    };
  }

  function localSearch(q) {
    const needle = q.toLowerCase();
    const hits = [];
    for (const [id, events] of Object.entries(data.events)) {
      const items = new Map();
      for (const e of events) {
        for (const i of e.plan || []) {
          if (!(i.content.toLowerCase().includes(needle) || i.id.toLowerCase().includes(needle))) continue;
          const key = i.id + '\u0000' + i.content;
          const t = items.get(key);
          if (t) t.last = e.seq; else items.set(key, { item: i.id, content: i.content, first: e.seq, last: e.seq });
        }
        const m = markOf(e);
        if (m && (m.kind === 'refusal' || m.kind === 'flag') && (m.text.toLowerCase().includes(needle) || m.kind.includes(needle))) hits.push({ type: m.kind, session: id, name: id, seq: e.seq, text: m.text });
      }
      const grouped = new Map();
      for (const t of items.values()) {
        if (!grouped.has(t.item)) grouped.set(t.item, { type: 'item', session: id, name: id, item: t.item, texts: [] });
        grouped.get(t.item).texts.push({ content: t.content, first: t.first, last: t.last });
      }
      hits.unshift(...grouped.values());
    }
    const all = hits.slice(0, 100);
    return { hits: all, indexed: 0, events: 0 };
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
    // Search as you type: the latest answer wins, older ones are dropped.
    let asked = 0;
    let timer = null;
    const runSearch = async () => {
      const mine = ++asked;
      const q = search.value.trim();
      if (!q) { results.replaceChildren(); return; }
      try {
        const answer = await api.search(q);
        if (mine !== asked) return;
        const rows = [];
        if (answer.events && answer.indexed < answer.events) rows.push(el('li', { class: 'muted', id: 'search-indexing' }, 'Still indexing: ' + answer.indexed + ' of ' + answer.events + ' events searched so far.'));
        if (!answer.hits.length) rows.push(el('li', { class: 'muted' }, 'nothing found'));
        for (const h of answer.hits) {
          if (h.type === 'item') {
            rows.push(el('li', { class: 'hit', 'data-session': h.session },
              el('span', { class: 'small muted' }, h.name + ' · item ' + h.item), ' ',
              h.texts.map((t, i) => [i ? ' · ' : '', el('a', { href: '#/s/' + enc(h.session) + '/' + t.first, title: 'seq ' + t.first + ' to ' + t.last }, t.content), el('span', { class: 'small muted' }, ' (seq ' + t.first + (t.last !== t.first ? '–' + t.last : '') + ')')])));
          } else {
            rows.push(el('li', { class: 'hit', 'data-session': h.session },
              el('span', { class: 'small muted' }, h.name + ' · '), el('span', { class: 'mk-' + h.type }, h.type), ' ',
              el('a', { href: '#/s/' + enc(h.session) + '/' + h.seq }, 'seq ' + h.seq), ' ', h.text));
          }
        }
        results.replaceChildren(...rows);
      } catch (e) { if (mine === asked) results.replaceChildren(el('li', { class: 'error' }, e.message)); }
    };
    search.oninput = () => { clearTimeout(timer); timer = setTimeout(runSearch, 150); };
    search.onkeydown = (ev) => { if (ev.key === 'Enter') { clearTimeout(timer); runSearch(); } };
    app.replaceChildren(
      el('div', { class: 'toolbar' }, filter, search),
      results,
      sessions.length ? tree : el('p', { class: 'muted' }, 'No sessions in this store yet.'),
    );
  }

  // ---- one session, a window at a time ----
  // current: {id, info, forks, first, last, seq, zoom, win: {from, to, plans, events}, summary}
  let current = null;
  let navigation = 0; // answers of an older navigation are dropped
  const BUCKETS = 400;
  const ZOOMS = [10, 25, 50, 100, 200, 400];
  const MARK_KINDS = [
    ['refusal', 'refusal', 'A plan call planlog (or the agent) refused; nothing changed.'],
    ['flag', 'flag', 'An accepted write that breaks a planning rule, such as completing several items at once.'],
    ['compaction', 'compaction', 'The agent compacted its context (the conversation was summarised).'],
    ['restore', 'restore', 'The plan was put back into the agent\'s context.'],
  ];

  // The events a window needs around `seq`: twice the lifelines' width on each side.
  function windowSize(c) { return Math.min(1000, Math.max(200, c.zoom * 4)); }

  async function loadWindow(c, seq) {
    const size = windowSize(c);
    const from = Math.max(c.first, Math.min(seq - Math.floor(size / 2), c.last - size + 1));
    const answer = await api.events(c.id, from, size);
    const plans = new Map();
    let plan = answer.plan_before || [];
    plans.set(from - 1, plan);
    for (const e of answer.events) { if (e.plan) plan = e.plan; plans.set(e.seq, plan); }
    const events = answer.events;
    return { from, to: events.length ? events[events.length - 1].seq : from - 1, plans, events, last: answer.last };
  }

  function inWindow(c, seq) { return c.win && seq >= c.win.from && seq <= c.win.to; }

  async function showSession(id, seq) {
    const mine = ++navigation;
    const info = await api.session(id);
    if (mine !== navigation) return;
    const c = { id, info, forks: info.forks || [], first: info.first || 1, last: info.events, zoom: 50, win: null, summary: null, status: '' };
    if (!c.last) { app.replaceChildren(el('p', { class: 'error' }, 'No session ' + id + ' in this store.')); return; }
    c.seq = Math.min(Math.max(seq || c.last, c.first), c.last);
    c.win = await loadWindow(c, c.seq);
    if (mine !== navigation) return;
    c.seq = Math.max(c.seq, c.first);
    current = c;
    document.getElementById('where').textContent = nameOf(info);
    render();
    loadSummary(c);
  }

  // The minimap's data; asked again while the index is still catching up with the session.
  async function loadSummary(c) {
    try {
      const s = await api.summary(c.id, BUCKETS);
      if (current !== c) return;
      c.summary = s;
      if (s.first) c.first = s.first;
      c.forks = s.forks && s.forks.length ? s.forks : c.forks;
      const box = document.getElementById('minimap-box');
      if (box) box.replaceWith(minimap());
      if (s.indexed < s.last) setTimeout(() => { if (current === c) loadSummary(c); }, 1000);
    } catch (e) {
      c.status = 'minimap: ' + e.message;
    }
  }

  // Moves to `seq`: at once when the window holds it, else once its window is read. A window
  // near its edge is moved on in the background, so steps stay local.
  async function go(seq) {
    const c = current;
    if (!c) return;
    c.seq = Math.min(Math.max(Math.round(seq), c.first), c.last);
    history.replaceState(null, '', '#/s/' + enc(c.id) + '/' + c.seq);
    if (!inWindow(c, c.seq)) {
      const mine = (c.asked = (c.asked || 0) + 1);
      const win = await loadWindow(c, c.seq);
      if (current !== c || mine !== c.asked) return;
      c.win = win;
    }
    render();
    recenter(c);
  }

  function recenter(c) {
    const w = c.win;
    const near = (c.seq - w.from < c.zoom && w.from > c.first) || (w.to - c.seq < c.zoom && w.to < c.last);
    if (!near || c.moving) return;
    c.moving = true;
    loadWindow(c, c.seq).then((win) => {
      c.moving = false;
      if (current === c && inWindow({ win }, c.seq)) { c.win = win; render(); }
    }, () => { c.moving = false; });
  }

  async function jumpToMark(forward) {
    const c = current;
    if (!c) return;
    const status = document.getElementById('mark-status');
    try {
      const answer = await api.mark(c.id, c.seq, forward, 'refusal,flag');
      if (current !== c) return;
      if (answer.mark) { c.status = answer.mark.kind + ' at seq ' + answer.mark.seq + ': ' + answer.mark.text; go(answer.mark.seq); }
      else if (status) status.textContent = 'No ' + (forward ? 'later' : 'earlier') + ' refusal or flag' + (answer.indexed < answer.last ? ' (indexed ' + answer.indexed + ' of ' + answer.last + ' events so far)' : '') + '.';
    } catch (e) { if (status) status.textContent = e.message; }
  }

  function zoom(by) {
    const c = current;
    const i = Math.min(ZOOMS.length - 1, Math.max(0, ZOOMS.indexOf(c.zoom) + by));
    c.zoom = ZOOMS[i];
    if (c.win.to - c.win.from + 1 < Math.min(windowSize(c), c.last - c.first + 1)) { c.win = null; go(c.seq); } else render();
  }

  function planAt(c, seq) { return c.win.plans.get(seq) || c.win.plans.get(c.win.from - 1) || []; }

  function render() {
    const c = current;
    const { id, info, forks, seq, last } = c;
    const event = c.win.events.find((e) => e.seq === seq);
    const o = info.origin || {};
    const head = el('div', { class: 'session-head' },
      el('h2', { id: 'session-title' }, nameOf(info)),
      info.description ? el('div', { class: 'small', id: 'session-described' }, describedText(info.description)) : null,
      el('div', { class: 'small muted' }, id, ' · ',
        o.type === 'fork'
          ? el('span', {}, 'forked from ', el('a', { id: 'parent-link', href: '#/s/' + enc(o.parent) + '/' + o.at }, o.parent), ' at seq ' + o.at)
          : originText(info),
        info.total_events ? el('span', { id: 'window-note' }, ' · this file holds seqs ' + c.first + ' to ' + last + ' of the session\'s ' + info.total_events + ' events') : ''),
      forks && forks.length ? el('div', { class: 'small', id: 'forks' }, 'forks: ',
        forks.map((f, i) => [i ? ', ' : '', el('a', { href: '#/s/' + enc(f.id), 'data-id': f.id }, nameOf(f)), ' at seq ' + f.origin.at])) : null);
    const scrubber = el('input', { type: 'range', id: 'scrubber', min: c.first, max: last, value: seq, step: 1, 'aria-label': 'seq' });
    scrubber.oninput = () => go(Number(scrubber.value));
    const controls = el('div', { class: 'toolbar scrub' },
      el('button', { id: 'prev', title: 'Previous event (←)', onclick: () => go(c.seq - 1) }, '◀'),
      scrubber,
      el('button', { id: 'next', title: 'Next event (→)', onclick: () => go(c.seq + 1) }, '▶'),
      el('span', { id: 'seq-label', title: 'seq: an event\'s number in the session\'s log, from 1' }, 'seq ' + seq + ' of ' + last),
      el('button', { id: 'prev-mark', title: 'Previous refusal or flag ([)', onclick: () => jumpToMark(false) }, '⟨ refusal/flag'),
      el('button', { id: 'next-mark', title: 'Next refusal or flag (])', onclick: () => jumpToMark(true) }, 'refusal/flag ⟩'),
      el('span', { id: 'mark-status', class: 'small muted' }, c.status || ''));
    c.status = '';
    if (canFork) controls.append(forkControls(c));
    app.replaceChildren(head, controls, minimap(), legend(),
      el('div', { class: 'panels' }, planPanel(planAt(c, seq), planAt(c, seq - 1), seq), event ? eventPanel(event, c) : el('section', { class: 'card' }, 'Loading…')),
      lifelines(c));
  }

  // "Fork here", then a confirmation that says what a fork is.
  function forkControls(c) {
    const box = el('span', { id: 'fork-box' });
    const label = el('input', { type: 'text', id: 'fork-label', placeholder: 'fork label (optional)' });
    const status = el('span', { id: 'fork-status', class: 'small' });
    const ask = el('button', { id: 'fork-button', title: 'A fork is a new session that starts from this session\'s plan at this seq; this session is not changed.', onclick: () => {
      box.replaceChildren(el('span', { class: 'small', id: 'fork-question' }, 'Start a new session from the plan at seq ' + c.seq + '? This session stays as it is. '),
        el('button', { id: 'fork-confirm', onclick: async () => {
          try {
            const fork = await api.fork(c.id, c.seq, label.value.trim());
            location.hash = '#/s/' + enc(fork);
          } catch (e) { status.textContent = e.message; status.className = 'small error'; }
        } }, 'Fork'),
        el('button', { id: 'fork-cancel', onclick: () => box.replaceChildren(label, ask, status) }, 'Cancel'), status);
    } }, 'Fork here');
    box.append(label, ask, status);
    return box;
  }

  // The whole session in buckets: refusals, flags, compactions, restores and forks always
  // show (a bucket with one gets a tick of its own row), the lifelines' window is shaded.
  function minimap() {
    const c = current;
    const W = 1000;
    const rows = { refusal: 2, flag: 10, compaction: 18, restore: 18 };
    const s = svg('svg', { id: 'minimap', viewBox: '0 0 ' + W + ' 34', preserveAspectRatio: 'none', role: 'img' });
    const span = c.last - c.first + 1;
    const x = (seq) => ((seq - c.first) / span) * W;
    s.append(svg('rect', { class: 'mm-back', x: 0, y: 0, width: W, height: 26 }));
    const lo = Math.max(c.first, c.seq - Math.floor(c.zoom / 2));
    s.append(svg('rect', { class: 'mm-window', x: x(lo), y: 0, width: Math.max(2, (c.zoom / span) * W), height: 26 }));
    const sum = c.summary;
    if (sum) {
      for (const b of sum.buckets) {
        const bx = x(b.from);
        const bw = Math.max(2, x(b.to + 1) - bx);
        for (const kind of ['refusal', 'flag', 'compaction', 'restore']) {
          if (!b[kind]) continue;
          const r = svg('rect', { class: 'mm-mark mk-' + kind, x: bx, y: rows[kind], width: bw, height: 6, 'data-from': b.from, 'data-kind': kind, 'data-count': b[kind] });
          const t = svg('title', {});
          t.textContent = b[kind] + ' ' + kind + (b[kind] > 1 ? 's' : '') + ' in seqs ' + b.from + '–' + b.to;
          r.append(t);
          s.append(r);
        }
      }
      for (const f of sum.forks || []) {
        const fx = x(f.origin.at);
        const t = svg('path', { class: 'fork-mark', d: 'M' + (fx - 5) + ' 34 L' + (fx + 5) + ' 34 L' + fx + ' 27 Z', 'data-fork': f.id });
        const title = svg('title', {});
        title.textContent = 'fork ' + (f.label || f.id) + ' leaves after seq ' + f.origin.at;
        t.append(title);
        t.addEventListener('click', (ev) => { ev.stopPropagation(); location.hash = '#/s/' + enc(f.id); });
        s.append(t);
      }
    }
    s.append(svg('rect', { class: 'cursor', x: x(c.seq), y: 0, width: 2, height: 26 }));
    s.addEventListener('click', (ev) => {
      const box = s.getBoundingClientRect();
      go(c.first + Math.floor(((ev.clientX - box.left) / box.width) * span));
    });
    const note = sum ? (sum.indexed < sum.last ? 'indexing: ' + sum.indexed + ' of ' + sum.last + ' events' : '') : 'reading the summary…';
    return el('div', { id: 'minimap-box' }, s, el('div', { class: 'small muted', id: 'minimap-note' }, note));
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

  function eventPanel(e, c) {
    const rejected = e.kind === 'write_rejected';
    const events = c.win.events;
    const i = events.indexOf(e);
    const start = Date.parse(c.info.created);
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

  // Each item's life over the seqs around the cursor (the zoom says how many): only that
  // window is drawn, so a step costs the same at seq 10 and at seq 1,000,000.
  function lifelines(c) {
    const { seq } = c;
    const lo = Math.max(c.win.from, Math.min(seq - Math.floor(c.zoom / 2), c.win.to - c.zoom + 1));
    const hi = Math.min(c.win.to, lo + c.zoom - 1);
    const order = [];
    const seen = new Set();
    for (let n = lo; n <= hi; n++) for (const i of planAt(c, n)) if (!seen.has(i.id)) { seen.add(i.id); order.push(i); }
    const count = hi - lo + 1;
    const cell = Math.max(4, Math.min(40, 900 / Math.max(1, count)));
    const label = 220;
    const rowH = 22;
    const top = 18;
    const s = svg('svg', { id: 'lifelines', width: label + cell * count + 10, height: top + Math.max(1, order.length) * rowH + 10, role: 'img' });
    const every = Math.max(1, Math.ceil(count / 10));
    for (let n = lo; n <= hi; n += every) {
      const t = svg('text', { x: label + (n - lo) * cell + 1, y: 12, class: 'axis' });
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
      let prev = planAt(c, lo - 1).find((i) => i.id === first.id) || null;
      for (let n = lo; n <= hi; n++) {
        const item = planAt(c, n).find((i) => i.id === first.id);
        const x = label + (n - lo) * cell;
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
    s.append(svg('line', { class: 'cursor', x1: label + (seq - lo + 0.5) * cell, x2: label + (seq - lo + 0.5) * cell, y1: top - 4, y2: top + order.length * rowH + 8 }));
    const zoomBar = el('span', { class: 'toolbar small', id: 'zoom' },
      el('button', { id: 'zoom-in', title: 'Fewer seqs, wider cells (+)', onclick: () => zoom(-1) }, '+'),
      el('button', { id: 'zoom-out', title: 'More seqs (−)', onclick: () => zoom(1) }, '−'),
      el('span', { id: 'zoom-label' }, 'seqs ' + lo + '–' + hi + ' (' + count + ' of ' + (c.last - c.first + 1) + ')'));
    return el('section', { class: 'card', id: 'lives' }, el('h3', {}, 'Item lifelines'), zoomBar, s);
  }

  // One colour per meaning, with the words explained.
  function legend() {
    const swatch = (cls, word, tip) => el('span', { class: 'legend-entry', title: tip }, el('span', { class: 'swatch ' + cls }), word);
    return el('details', { id: 'legend', class: 'small' }, el('summary', {}, 'Legend: what the colours and words mean'),
      el('div', {},
        swatch('sw-pending', 'pending', 'An item not started.'), swatch('sw-in_progress', 'in progress', 'An item being worked on.'),
        swatch('sw-completed', 'completed', 'An item done.'), swatch('sw-cancelled', 'cancelled', 'An item given up.'),
        MARK_KINDS.map(([k, word, tip]) => swatch('mk-' + k, word, tip)),
        swatch('sw-fork', 'fork', 'A new session that started from this one\'s plan at a seq (▲ under the seq).'),
        swatch('sw-checkpoint', 'checkpoint', 'The agent\'s own copy of its list, compared with the plan planlog kept.')),
      el('p', {}, 'seq: an event\'s number in the session\'s log, from 1. ○ on a lifeline: the item\'s text was edited; ▪: its dependencies changed; |: it was removed.'));
  }

  document.addEventListener('keydown', (ev) => {
    if (!current || /^(INPUT|TEXTAREA)$/.test(document.activeElement.tagName) && document.activeElement.type !== 'range') return;
    const c = current;
    const moves = { ArrowLeft: c.seq - 1, ArrowRight: c.seq + 1, Home: c.first, End: c.last, PageUp: c.seq - c.zoom, PageDown: c.seq + c.zoom };
    if (ev.key in moves) { ev.preventDefault(); go(moves[ev.key]); }
    else if (ev.key === ']') { ev.preventDefault(); jumpToMark(true); }
    else if (ev.key === '[') { ev.preventDefault(); jumpToMark(false); }
    else if (ev.key === '+' || ev.key === '=') { ev.preventDefault(); zoom(-1); }
    else if (ev.key === '-') { ev.preventDefault(); zoom(1); }
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
    let summaryAsked = 0;
    stream.onmessage = async (msg) => {
      const change = JSON.parse(msg.data);
      if (!current) { if (!location.hash.startsWith('#/s/')) await showList(); return; }
      const c = current;
      if (change.id !== c.id || change.events <= c.last) return;
      const atEnd = c.seq === c.last;
      c.last = change.events;
      c.info.events = change.events;
      // The minimap at most every two seconds; the window only when the cursor follows the end.
      if (Date.now() - summaryAsked > 2000) { summaryAsked = Date.now(); loadSummary(c); }
      if (atEnd) { c.win = null; await go(c.last); } else render();
    };
  }
})();
