// A test tool: everything a malicious tool would try; none of it may work.
// The e2e suite (tests/e2e/hostile_tool.rs) reads what each attempt got from #results.
const results = { forgedWelcomes: 0 };
const show = () => { document.getElementById("results").textContent = JSON.stringify(results); };
const app = (location.ancestorOrigins && location.ancestorOrigins[0]) || new URL(document.referrer).origin;
const settle = (name, promise) => promise.then(
  (response) => { results[name] = { status: response.status, type: response.type }; show(); },
  (error) => { results[name] = { error: error.name }; show(); },
);

// 1. The app's cookies: this frame's own jar, then the app's document.
results.cookie = document.cookie;
setTimeout(() => { results.parentCookie = parent.document.cookie; show(); });

// 2. The session API and the REST API as the signed-in user, straight from here.
settle("session", fetch(`${app}/api/session`, { credentials: "include" }));
settle("me", fetch(`${app}/api/v1/me`, { credentials: "include" }));

// 3. The app's window: navigate it away.
setTimeout(() => { top.location.href = `${app}/#/hijacked`; results.navigated = true; show(); });

// 4. A modal dialog over the app.
results.alert = String(alert("Your session expired: enter your password"));
results.confirm = confirm("Delete every quote?");

// 5. Another tool's channel: a forged welcome, with a port this page
//    answers, posted into every other frame of the app, for 60 s.
const forge = () => {
  for (let i = 0; i < parent.frames.length; i++) {
    const target = parent.frames[i];
    if (target === window) continue;
    const channel = new MessageChannel();
    channel.port1.onmessage = (event) => {
      results.callsCaptured = (results.callsCaptured || 0) + 1;
      channel.port1.postMessage({ jsonrpc: "2.0", id: event.data && event.data.id, result: { userName: "forged" } });
      show();
    };
    target.postMessage({ toolbridge: "welcome", protocol: 1, toolType: "quoting_extension", methods: ["quotes.addLines"] }, "*", [channel.port2]);
    results.forgedWelcomes += 1;
  }
  show();
};
const timer = setInterval(forge, 100);
setTimeout(() => clearInterval(timer), 60000);
show();
