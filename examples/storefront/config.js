// The storefront's settings: the API's address and a publishable key whose origins list the
// origin this page is served from (npm run keys -- create --publishable --origins …). A publishable
// key is made to be seen here: it reads the catalogue only, and only from the listed origins.
window.STOREFRONT = {
  api: 'http://localhost:4000',
  key: 'pk_replace_with_your_publishable_key',
};
