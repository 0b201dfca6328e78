// Draws the page's canvas, then checks that every sibling file the page links loaded.
const canvas = document.getElementById("scene");
const context = canvas.getContext("2d");
context.fillStyle = "#3366ff";
context.fillRect(0, 0, canvas.width, canvas.height);
const background = getComputedStyle(document.body).backgroundColor;
if (background !== "rgb(34, 170, 102)") console.error("own/style.css did not apply: " + background);
const blob = new Image();
blob.onerror = () => console.error("a blob: image did not load");
blob.src = URL.createObjectURL(new Blob([document.getElementById("shape").textContent], { type: "image/svg+xml" }));
document.body.append(blob);
let framed = false;
addEventListener("message", (e) => {
  framed = e.data === "frame ok";
  if (!framed) console.error(e.data);
});
setTimeout(() => framed || console.error("own/sub/frame.html did not report"), 800);
