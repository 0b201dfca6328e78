document.title = "@TOKEN@";
document.documentElement.style.background = "#ff00ff";
console.error("@TOKEN@");
