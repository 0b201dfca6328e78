// What a page that got hold of something does with it: copies it everywhere the gate
// records (the title, the screenshot, the errors of the stored evidence).
window.leak = (text) => {
  document.title = String(text).slice(0, 200);
  const shown = document.createElement("p");
  shown.style.cssText = "margin:0;color:#ff00ff;background:#ff00ff;font:bold 120px sans-serif";
  shown.textContent = text;
  document.body.append(shown);
  console.error("leaked: " + text);
};
