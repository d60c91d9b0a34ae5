// slugify turns a title into the last part of a URL: "Hello, World!" → "hello-world".
function slugify(title) {
  return title.trim().replace(/ /g, '-');
}

module.exports = { slugify };
